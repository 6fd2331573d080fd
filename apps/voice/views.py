"""Voice's two endpoints, both POST with the CSRF token and scoped to the
person: a recording to text for the composer, a reply of theirs to audio.
Async, so a slow audio server holds no thread of the web process. Every
refusal is JSON {"error": words} with the status that says why (413: too long
or too large; 400: refused by routing or by the audio server; 502/504: the
server failed)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_POST

from apps.chats.selectors import chat_for
from apps.core.errors import Refused
from apps.core.ids import parse_id
from apps.voice import limits
from apps.voice.recording import RecordingRefused, body_too_big, recording_checked, too_big
from apps.voice.selectors import dictation_route_for, reply_for, speech_route_for
from apps.voice.services import VoiceError, recording_transcribe, speech_text, text_speak


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _form(request: HttpRequest):
    # Parsing the multipart body reads a spooled file: done off the event loop.
    return request.POST, request.FILES


@login_required
@require_POST
async def transcribe(request: HttpRequest) -> HttpResponse:
    user = await request.auser()
    # Before the body is parsed: a 30-minute recording is refused by its size alone.
    refused = body_too_big(int(request.META.get("CONTENT_LENGTH") or 0))
    if refused is not None:
        return _error(str(refused), refused.status)
    post, files = await sync_to_async(_form, thread_sensitive=False)(request)
    chat_id = parse_id(post.get("chat", ""))
    chat = await sync_to_async(chat_for)(user=user, pk=chat_id) if chat_id else None
    upload = files.get("file")
    if upload is None:
        return _error("No recording came with the request.", 400)
    try:
        if upload.size > limits.max_bytes():
            raise too_big(upload.size)  # not read into memory at all
        recording = recording_checked(
            data=await sync_to_async(upload.read, thread_sensitive=False)(),
            filename=upload.name or "dictation.wav",
            content_type=upload.content_type or "",
            declared_seconds=post.get("seconds"),
        )
        connection = await sync_to_async(dictation_route_for)(user=user, chat=chat)
        text = await recording_transcribe(connection=connection, recording=recording)
    except (RecordingRefused, VoiceError) as error:
        return _error(str(error), error.status)
    except Refused as error:
        return _error(str(error), 400)
    if not text:
        return _error("The transcription server heard no words in the recording.", 422)
    return JsonResponse({"text": text})


@login_required
@require_POST
async def speak(request: HttpRequest, message_id: int) -> HttpResponse:
    user = await request.auser()
    reply = await sync_to_async(reply_for)(user=user, pk=message_id)
    if reply.in_flight:
        return _error("The reply is still being written; read it aloud when it is done.", 409)
    text, cut = speech_text(reply.text, limits.max_speech_chars())
    if not text:
        return _error("This reply has no words to read aloud.", 400)
    try:
        connection = await sync_to_async(speech_route_for)(user=user, reply=reply)
        audio, content_type = await text_speak(connection=connection, text=text)
    except VoiceError as error:
        return _error(str(error), error.status)
    except Refused as error:
        return _error(str(error), 400)
    response = HttpResponse(audio, content_type=content_type)
    response["Cache-Control"] = "no-store"
    # The page says "read the first part" when the reply was longer than the limit.
    response["X-Voice-Cut"] = "1" if cut else "0"
    return response
