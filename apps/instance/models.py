"""The instance's configuration rows: settings (one row), LLM connections with
their encrypted keys, the model catalogue."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from apps.core import crypto

_OCR_LANGUAGES = re.compile(r"^[a-z]{3}(?:_[a-z]+)?(?:\+[a-z]{3}(?:_[a-z]+)?)*$")


def validate_ocr_languages(value: str) -> None:
    """Tesseract's form, "eng" or "eng+deu": codes only, so the value can go
    into tesseract's argument list as it is."""
    if value and not _OCR_LANGUAGES.match(value):
        raise ValidationError(
            "Tesseract language codes joined by +, like eng or eng+deu.", code="invalid"
        )


class InstanceSettings(models.Model):
    """Instance-wide switches admins edit in Django admin. Exactly one row (pk=1)."""

    site_name = models.CharField(max_length=60, default="Jarvis")
    signup_enabled = models.BooleanField(
        default=False,
        help_text="Let people create their own account from the sign-in page. "
        "New accounts join the household group.",
    )
    default_model = models.ForeignKey(
        "instance.ModelEntry",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The model a chat starts with when the person has not chosen one "
        "(or may not use theirs).",
    )
    # Blank means the built-in prompt (apps.instance.prompts), so an upgrade
    # that improves it reaches every instance that never changed it.
    system_prompt = models.TextField(blank=True)

    # Reading files: OCR and image descriptions (apps.library.ingest).
    ocr_languages = models.CharField(
        "OCR languages",
        max_length=100,
        default="eng",
        validators=[validate_ocr_languages],
        help_text="Tesseract languages for scanned PDFs and photos, joined by +, e.g. "
        "eng+deu. Each needs its tesseract-ocr-<code> package. Collections may set their own. "
        "Empty turns OCR off.",
        blank=True,
    )
    describe_images = models.BooleanField(
        "describe figures and photos",
        default=False,
        help_text="Ask the vision model to describe PDF figures and uploaded photos, so they "
        "are found by what they show. Collections may opt in or out. Costs one model call "
        "per new image.",
    )
    vision_model = models.ForeignKey(
        "instance.ModelEntry",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        limit_choices_to={"supports_vision": True},
        help_text="The model that describes images. Empty: the first enabled vision model, "
        "local ones first. Images of local-only collections only ever go to a local model.",
    )

    # Background work. Read by the worker at run time, so a change applies from
    # the next tick without restarting anything.
    sync_interval_minutes = models.PositiveIntegerField(
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(24 * 60)],
        help_text="How often folder sources (note vaults) are synced.",
    )
    inbox_interval_minutes = models.PositiveIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(24 * 60)],
        help_text="How often PDF inboxes are scanned for new or changed files.",
    )
    chats_kept = models.PositiveIntegerField(
        default=50,
        validators=[MaxValueValidator(100_000)],
        help_text="Each person's unpinned chats beyond this many are removed, oldest first, "
        "with their searchable history (pinned chats never). 0 keeps every chat.",
    )
    drafts_retention_days = models.PositiveIntegerField(
        default=30,
        validators=[MaxValueValidator(3650)],
        help_text="Drafts untouched this many days are removed (kept drafts never). 0 disables.",
    )
    digest_enabled = models.BooleanField(
        default=False,
        help_text="Offer the weekly paper digest to people with the run-digest permission.",
    )
    digest_weekday = models.PositiveSmallIntegerField(
        default=0,
        choices=[
            (0, "Monday"),
            (1, "Tuesday"),
            (2, "Wednesday"),
            (3, "Thursday"),
            (4, "Friday"),
            (5, "Saturday"),
            (6, "Sunday"),
        ],
        help_text="The day the weekly digest runs.",
    )
    digest_hour = models.PositiveSmallIntegerField(
        default=7,
        validators=[MaxValueValidator(23)],
        help_text="The hour (0–23, the instance's time zone) the weekly digest runs.",
    )

    # Search. Read by the library at run time (apps.library.index.embeddings,
    # apps.library.search.rerank); models are loaded from disk, never downloaded.
    embedding_model = models.CharField(
        max_length=40,
        blank=True,
        choices=[
            ("all-MiniLM-L6-v2-onnx-int8", "all-MiniLM-L6-v2 (English)"),
            ("use-multilingual-v3", "Universal Sentence Encoder multilingual v3 (16 languages)"),
            ("directory", "An ONNX model in the directory below"),
        ],
        help_text="The model passages are embedded with. Blank: JARVIS_EMBEDDING_MODEL "
        "(English MiniLM unless set). Changing it re-embeds every passage in the worker "
        "(see Jobs); search keeps using the current vectors until the new ones are ready.",
    )
    embedding_model_dir = models.CharField(
        "embedding model directory",
        max_length=500,
        blank=True,
        help_text="Absolute path on the server to a sentence-transformers ONNX export "
        "(model.onnx, tokenizer.json, config.json, special_tokens_map.json, "
        "tokenizer_config.json). Only used with “An ONNX model in the directory below”.",
    )
    reranker = models.CharField(
        max_length=12,
        blank=True,
        choices=[
            ("", "Off"),
            ("directory", "A cross-encoder in the directory below (runs here)"),
            ("endpoint", "A /rerank endpoint of the connection below"),
        ],
        help_text="Re-orders the top 30 passages of every search with a cross-encoder. "
        "Off unless chosen.",
    )
    reranker_dir = models.CharField(
        "reranker directory",
        max_length=500,
        blank=True,
        help_text="Absolute path to a cross-encoder ONNX export (model.onnx, tokenizer.json, "
        "config.json, special_tokens_map.json, tokenizer_config.json), e.g. "
        "ms-marco-MiniLM-L-6-v2.",
    )
    reranker_connection = models.ForeignKey(
        "instance.Connection",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Where the /rerank endpoint is (its base URL, key, local or cloud). A cloud "
        "reranker only ever receives passages from cloud-allowed collections.",
    )
    reranker_model = models.CharField(
        max_length=200, blank=True, help_text="The model id the endpoint expects, if any."
    )
    reranker_api = models.CharField(
        "reranker API",
        max_length=10,
        default="jina",
        blank=True,  # blank: the jina shape
        choices=[
            ("jina", "POST /rerank {query, documents} (llama.cpp, vLLM, Infinity, Jina, Cohere)"),
            ("tei", "POST /rerank {query, texts} (Hugging Face text-embeddings-inference)"),
        ],
    )

    class Meta:
        verbose_name = "instance settings"
        verbose_name_plural = "instance settings"

    def __str__(self) -> str:
        return "Instance settings"

    def save(self, *args, **kwargs) -> None:
        self.pk = 1
        super().save(*args, **kwargs)

    def clean(self) -> None:
        errors = {}
        if self.embedding_model == "directory":
            problem = model_directory_problem(self.embedding_model_dir)
            if problem:
                errors["embedding_model_dir"] = problem
        if self.reranker == "directory":
            problem = model_directory_problem(self.reranker_dir)
            if problem:
                errors["reranker_dir"] = problem
        if self.reranker == "endpoint" and self.reranker_connection_id is None:
            errors["reranker_connection"] = "Choose the connection whose /rerank endpoint to use."
        if errors:
            raise ValidationError(errors)


MODEL_DIRECTORY_FILES = (
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
)


def model_directory_problem(path: str) -> str:
    """What is wrong with a model directory an admin named ("" when nothing)."""
    folder = Path(path.strip()) if path.strip() else None
    if folder is None or not folder.is_absolute():
        return "Give the absolute path of the model's directory on this server."
    if not folder.is_dir():
        return f"{folder} is not a directory this server can read."
    missing = [name for name in MODEL_DIRECTORY_FILES if not (folder / name).is_file()]
    if missing:
        return f"{folder} has no {', '.join(missing)}."
    return ""


def validate_base_url(value: str) -> None:
    """http(s) with a host. Hostnames without a dot (`http://gpu-box:11434`) are
    fine: household endpoints often have one. Credentials in the URL are refused;
    the key has its own encrypted field."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        raise ValidationError("Enter a valid http:// or https:// URL.", code="invalid") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Enter an http:// or https:// URL with a host.", code="invalid")
    if any(ch.isspace() for ch in value):
        raise ValidationError("A URL cannot contain spaces.", code="invalid")
    if parts.username or parts.password:
        raise ValidationError(
            "Put the API key in its own field, not in the URL.", code="credentials"
        )
    if parts.query or parts.fragment:
        raise ValidationError("The base URL takes no query or fragment.", code="invalid")


def validate_connection_name(value: str) -> None:
    # A model's label is "<connection>:<model id>" and model ids may contain
    # colons (Ollama's "llama3.1:8b"), so the name must not.
    if ":" in value:
        raise ValidationError("A connection name cannot contain ':'.", code="colon")
    if value != value.strip() or not value:
        raise ValidationError("A connection name cannot start or end with a space.", code="space")


class Connection(models.Model):
    """An LLM endpoint: where requests go and with which key."""

    class Kind(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible"
        ANTHROPIC = "anthropic", "Anthropic"

    class Location(models.TextChoices):
        LOCAL = "local", "Local (runs on your own network)"
        CLOUD = "cloud", "Cloud (a third party's servers)"

    name = models.CharField(max_length=60, unique=True, validators=[validate_connection_name])
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.OPENAI)
    base_url = models.CharField(
        "base URL",
        max_length=500,
        validators=[validate_base_url],
        help_text="e.g. http://localhost:11434/v1 (Ollama), https://api.openai.com/v1, "
        "https://api.anthropic.com",
    )
    # Fernet token (apps.core.crypto); never shown, never sent to a browser.
    api_key_encrypted = models.TextField(blank=True, editable=False)
    location = models.CharField(
        max_length=10,
        choices=Location.choices,
        default=Location.CLOUD,
        help_text="Choose local only for an endpoint on your own network or this server. "
        "Notes marked local-only never go to a cloud connection; when unsure, keep cloud.",
    )
    enabled = models.BooleanField(default=True)
    # Sampling options sent with every request to this connection (checked by
    # apps.instance.forms.REQUEST_OPTIONS): a small model answers better at a
    # low temperature with a repeat penalty.
    request_options = models.JSONField(
        default=dict,
        blank=True,
        help_text='Sent with every request, e.g. {"temperature": 0.2, "repeat_penalty": 1.1}. '
        "Allowed: temperature, top_p, top_k, min_p, repeat_penalty, presence_penalty, "
        'frequency_penalty, seed, tool_choice ("auto", "required" or "none"); Anthropic: '
        "temperature, top_p, top_k only.",
    )
    # Voice (apps.voice): the model ids of the endpoint's OpenAI-style audio
    # routes. Blank: this connection is not used for that. The location above
    # routes audio exactly as it routes chat (a private chat's audio and a
    # reply that cited local-only notes go only to a local connection).
    transcription_model = models.CharField(
        max_length=200,
        blank=True,
        help_text="Dictation: the model for POST /audio/transcriptions, e.g. whisper-1, "
        "Systran/faster-whisper-small (faster-whisper-server); whisper.cpp's server takes "
        "any name. Blank: not used for dictation.",
    )
    speech_model = models.CharField(
        max_length=200,
        blank=True,
        help_text="Read aloud: the model for POST /audio/speech, e.g. tts-1 or kokoro. "
        "Blank: not used for reading aloud.",
    )
    speech_voice = models.CharField(
        max_length=100,
        blank=True,
        help_text="The voice the speech model reads with, e.g. alloy or af_bella. Blank: alloy.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        self.name = self.name.strip()
        self.base_url = self.base_url.strip().rstrip("/")
        self.transcription_model = self.transcription_model.strip()
        self.speech_model = self.speech_model.strip()
        self.speech_voice = self.speech_voice.strip()
        if self.kind == self.Kind.ANTHROPIC and (self.transcription_model or self.speech_model):
            # Anthropic's API has no audio routes; only OpenAI-compatible servers do.
            raise ValidationError(
                "Dictation and reading aloud need an OpenAI-compatible connection.",
                code="audio_kind",
            )

    def set_api_key(self, text: str | None) -> None:
        """Store a key (encrypted); blank clears it. Call save() afterwards."""
        text = (text or "").strip()
        self.api_key_encrypted = crypto.encrypt(text) if text else ""

    @property
    def api_key(self) -> str | None:
        """The plain key, or None. Raises crypto.SecretUndecryptable if the key
        it was stored with is gone."""
        if not self.api_key_encrypted:
            return None
        return crypto.decrypt(self.api_key_encrypted)

    @property
    def masked_key(self) -> str:
        if not self.api_key_encrypted:
            return ""
        try:
            return crypto.mask(self.api_key)
        except crypto.SecretUndecryptable:
            # A listing must still render; the person needs to enter it again.
            return "(cannot decrypt: enter it again)"

    @property
    def is_cloud(self) -> bool:
        # Unknown is cloud: only an explicit "local" keeps content at home.
        return self.location != self.Location.LOCAL


class ModelEntry(models.Model):
    """A model of a connection that people may pick, with what it can do."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="models")
    model_id = models.CharField(
        "model id", max_length=200, help_text="As the endpoint names it, e.g. llama3.1:8b"
    )
    display_name = models.CharField(max_length=120, blank=True)
    supports_tools = models.BooleanField(
        default=False, help_text="Can call tools (needed to search the notes)."
    )
    supports_vision = models.BooleanField(default=False, help_text="Accepts images.")
    # A small model picks the wrong tool when offered sixteen (project tools for
    # every question): offered only the search and the document reader. Check
    # sets it when the tool probe came back as text rather than a tool call.
    search_only = models.BooleanField(
        "small model: search only",
        default=False,
        help_text="Offer only search_notes and get_document (a small model picks the wrong "
        "tool from a long list).",
    )
    context_length = models.PositiveIntegerField(
        default=0, help_text="Context window in tokens; 0 = unknown."
    )
    enabled = models.BooleanField(default=True)
    # An admin's note added to every chat on this model, right after the
    # instance prompt ("keep answers short: this model loses track in long prompts").
    prompt_note = models.TextField(
        "note for this model",
        blank=True,
        help_text="Added to the system prompt of every chat on this model, after the "
        "instance prompt. E.g. “This model needs short prompts: answer in three sentences.”",
    )
    groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="+",
        help_text="Who may use it. Empty = everyone. Cloud models also need the "
        "'use cloud models' permission.",
    )

    class Meta:
        verbose_name = "model"
        ordering = ["connection__name", "model_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["connection", "model_id"], name="instance_model_unique_per_connection"
            )
        ]

    def __str__(self) -> str:
        return self.label

    def clean(self) -> None:
        self.model_id = self.model_id.strip()
        self.display_name = self.display_name.strip()

    @property
    def label(self) -> str:
        return f"{self.connection.name}:{self.model_id}"

    @property
    def name(self) -> str:
        """What people see in a model picker."""
        return self.display_name or self.model_id

    @property
    def is_cloud(self) -> bool:
        return self.connection.is_cloud
