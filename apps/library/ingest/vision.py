"""Describing figures and photos with a vision model, so they are found by
what they show ("the photo of the boiler's label").

Network work: it runs in the worker after the parse (never inside the parse
child, never inside a transaction), and what it learns is written afterwards
in one short transaction. Descriptions are remembered per collection by the
hash of the image (`ImageDescription`): an unchanged figure is never described
twice, a changed one is described again.

Which model: the instance's vision model, else the first enabled model that
accepts images, local ones first, among those the collection's owner may use.
Privacy: the images of a local-only collection, or of a private folder, go only
to a local model; the image blocks carry `local_only`, and `apps.llm.stream_chat`
refuses to send such a block to a cloud model whatever this module chose.
Without a usable model the caption alone is indexed, and the document says why.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction

from apps.core.errors import JarvisError
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.library.ingest.parsing.types import Figure, ParsedDocument, ParseOptions
from apps.library.models import ImageDescription, Source
from apps.llm import ProviderError, provider_config_for, reply_text
from apps.llm.selectors import models_for
from apps.llm.transcript import image, text

logger = logging.getLogger(__name__)

MAX_DESCRIPTION_CHARS = 1500
REQUEST_TIMEOUT_SECONDS = 120.0
MAX_TOKENS = 400

SYSTEM = (
    "You describe images for a household's private search index. Answer with one "
    "paragraph of plain text, no Markdown, no preamble. Say what kind of image it is "
    "and what it shows; copy any visible text, labels, numbers, model or serial "
    "numbers exactly. Do not guess what you cannot see."
)


@dataclass(frozen=True)
class VisionPlan:
    """Whether a collection's images are described, by which model, and why not."""

    wanted: bool
    local_only: bool
    model: ModelEntry | None = None
    reason: str = ""  # shown when images are wanted but cannot be described


def describing_wanted(source: Source) -> bool:
    if source.describe_images == Source.Describe.ON:
        return True
    if source.describe_images == Source.Describe.OFF:
        return False
    return instance_settings().describe_images


def is_local_only(source: Source, *, in_private_dir: bool) -> bool:
    # Unknown is local: only an explicit "allowed" lets content reach a cloud model.
    return in_private_dir or source.cloud != Source.Cloud.ALLOWED


def vision_model_for(source: Source, *, local_only: bool) -> ModelEntry | None:
    """The model that may describe this collection's images, or None."""
    candidates = models_for(source.owner).filter(supports_vision=True)
    if local_only:
        candidates = candidates.filter(connection__location=Connection.Location.LOCAL)
    chosen_id = instance_settings().vision_model_id
    if chosen_id is not None:
        chosen = candidates.filter(pk=chosen_id).first()
        if chosen is not None:
            return chosen
    local_first = sorted(candidates, key=lambda m: (m.is_cloud, m.connection.name, m.model_id))
    return local_first[0] if local_first else None


def vision_plan(source: Source, *, in_private_dir: bool) -> VisionPlan:
    local_only = is_local_only(source, in_private_dir=in_private_dir)
    if not describing_wanted(source):
        return VisionPlan(wanted=False, local_only=local_only)
    model = vision_model_for(source, local_only=local_only)
    if model is not None:
        return VisionPlan(wanted=True, local_only=local_only, model=model)
    reason = (
        "no local vision model is available to this local-only collection"
        if local_only
        else "no vision model is configured"
    )
    return VisionPlan(wanted=True, local_only=local_only, reason=reason)


def parse_options_for(source: Source, plan: VisionPlan) -> ParseOptions:
    """What the parse of a document of `source` may do: OCR in the collection's
    languages (else the instance's), and carry image pixels only when a model
    will look at them."""
    languages = source.ocr_languages or instance_settings().ocr_languages
    return ParseOptions(
        ocr_languages=languages,
        figure_images=plan.model is not None,
        ocr_max_pages=settings.OCR_MAX_PAGES,
    )


def images_describe(
    parsed: ParsedDocument,
    *,
    source: Source,
    plan: VisionPlan,
    title: str,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Fill `parsed.descriptions` for its figures and photos: remembered ones
    first, then new ones from the model. Adds a warning when some could not be
    described. Returns how many the model was asked for. No transaction is held
    while the model works; new descriptions are saved together afterwards."""
    if not parsed.figures or not plan.wanted:
        return 0
    hashes = {figure.image_hash for figure in parsed.figures}
    parsed.descriptions.update(
        ImageDescription.objects.filter(source=source, image_hash__in=hashes).values_list(
            "image_hash", "description"
        )
    )
    todo = _unique([f for f in parsed.figures if f.image_hash not in parsed.descriptions])
    if not todo:
        return 0
    if plan.model is None:
        parsed.warnings.append(f"{_not_described(todo)}: {plan.reason}")
        return 0
    try:
        config = provider_config_for(
            plan.model, timeout=REQUEST_TIMEOUT_SECONDS, max_tokens=MAX_TOKENS
        )
    except JarvisError as exc:  # the connection's key cannot be read any more
        logger.warning("vision model %s unusable: %s", plan.model.label, exc)
        parsed.warnings.append(f"{_not_described(todo)}: {exc}")
        return 0
    made: list[ImageDescription] = []
    failures: list[str] = []
    for number, figure in enumerate(todo, start=1):
        if progress is not None:
            progress(f"describing image {number} of {len(todo)}")
        if not figure.image:
            continue  # its pixels could not be read: the caption stands alone
        try:
            answer = async_to_sync(reply_text)(
                config, system=SYSTEM, turns=[_question(figure, title, plan.local_only)]
            )
        except ProviderError as exc:
            logger.warning("describing an image of source %s failed: %s", source.pk, exc.message)
            failures.append(exc.message)
            continue
        description = " ".join(answer.split())[:MAX_DESCRIPTION_CHARS]
        if not description:
            failures.append("the model returned no description")
            continue
        parsed.descriptions[figure.image_hash] = description
        made.append(
            ImageDescription(
                source=source,
                image_hash=figure.image_hash,
                description=description,
                model_label=plan.model.label,
                local_model=not plan.model.is_cloud,
            )
        )
    if made:
        with transaction.atomic():
            ImageDescription.objects.bulk_create(made, ignore_conflicts=True)
    if failures:
        parsed.warnings.append(
            f"{len(failures)} image(s) could not be described (first: {failures[0]})"
        )
    return len(todo)


def _question(figure: Figure, title: str, local_only: bool) -> dict:
    if figure.kind == "photo":
        ask = "Describe this photo."
    else:
        ask = f"This figure is on page {figure.page} of “{title}”."
        if figure.caption:
            ask += f" Its caption reads: “{figure.caption}”."
        ask += " Describe what the figure shows."
    data = base64.b64encode(figure.image).decode("ascii")
    return {
        "role": "user",
        "blocks": [image(figure.media_type, data, local_only=local_only), text(ask)],
    }


def _unique(figures: list[Figure]) -> list[Figure]:
    seen: set[str] = set()
    out = []
    for figure in figures:
        if figure.image_hash not in seen:
            seen.add(figure.image_hash)
            out.append(figure)
    return out


def _not_described(figures: list[Figure]) -> str:
    if all(f.kind == "photo" for f in figures):
        return "the photo was not described"
    count = len(figures)
    return f"{count} figure{'s were' if count > 1 else ' was'} indexed by caption only"
