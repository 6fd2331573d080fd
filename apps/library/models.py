"""The library: sources (collections), documents, their files and chunks.

The FTS5 table and the sqlite-vec tables that index Chunk rows are created by
migrations and written only by `apps.library.index`, in the same transaction
as the Chunk rows they mirror.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.utils import timezone

from apps.instance.models import validate_ocr_languages
from apps.library import formats

DEFAULT_PRIVATE_DIRS = ["private"]
DEFAULT_SKIP_DIRS = [".obsidian", ".trash"]


class Source(models.Model):
    """A collection of documents with one owner, one sharing rule and one cloud policy."""

    class Kind(models.TextChoices):
        VAULT = "vault", "Vault folder"
        UPLOADS = "uploads", "Uploads"
        INBOX = "inbox", "PDF inbox"
        PAPERS = "papers", "Papers"

    class Sharing(models.TextChoices):
        OWNER = "owner", "Only me"
        HOUSEHOLD = "household", "The household"
        GROUPS = "groups", "Chosen groups"

    class Cloud(models.TextChoices):
        LOCAL_ONLY = "local-only", "Local models only"
        ALLOWED = "allowed", "Cloud models allowed"

    class Describe(models.TextChoices):
        DEFAULT = "", "As the instance says"
        ON = "on", "Describe figures and photos"
        OFF = "off", "Do not describe them"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sources"
    )
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    root_path = models.CharField(max_length=1000, blank=True)  # folder kinds only
    sharing = models.CharField(max_length=10, choices=Sharing.choices, default=Sharing.OWNER)
    shared_groups = models.ManyToManyField(Group, blank=True, related_name="shared_sources")
    # Fail closed: a new folder is local-only until its owner says otherwise.
    cloud = models.CharField(max_length=12, choices=Cloud.choices, default=Cloud.LOCAL_ONLY)
    private_dirs = models.JSONField(default=list, blank=True)
    unversioned_dirs = models.JSONField(default=list, blank=True)
    # Folders whose notes are projects (the project registry, apps.projects).
    project_dirs = models.JSONField(default=list, blank=True)
    skip_dirs = models.JSONField(default=list, blank=True)
    # Blank: the instance's OCR languages (InstanceSettings.ocr_languages).
    ocr_languages = models.CharField(
        max_length=100, blank=True, validators=[validate_ocr_languages]
    )
    # Whether a vision model describes this collection's figures and photos;
    # blank follows the instance default. Local-only collections only ever use
    # a local model (apps.library.ingest.vision).
    describe_images = models.CharField(
        max_length=3, choices=Describe.choices, default=Describe.DEFAULT, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    last_synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="source_unique_name_per_owner")
        ]
        ordering = ["owner_id", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.owner})"

    @property
    def is_folder(self) -> bool:
        return self.kind in (self.Kind.VAULT, self.Kind.INBOX)


class Document(models.Model):
    # One member per format Jarvis reads (apps.library.formats): NOTE, PDF, ORG…
    Kind = models.TextChoices(
        "Kind", [(f.kind.upper(), (f.kind, f.label)) for f in formats.FORMATS]
    )

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PARSING = "parsing", "Parsing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    class DateSource(models.TextChoices):
        FILENAME = "filename", "file name"
        FRONTMATTER = "frontmatter", "frontmatter date"
        HEADING = "heading", "first heading"
        SECTION = "section", "dated sections"
        PAGE = "page", "page metadata"
        PUBLISHED = "published", "publication date"
        FETCHED = "fetched", "date fetched"
        MTIME = "mtime-weak", "file modified time (undated)"

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    path = models.CharField(max_length=1000)  # primary path, relative to the source root
    title = models.CharField(max_length=500, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    content_hash = models.CharField(max_length=64, db_index=True)
    size = models.BigIntegerField(default=0)
    effective_date = models.DateField(null=True, blank=True)
    date_source = models.CharField(max_length=12, choices=DateSource.choices, blank=True)
    # Metadata fields a person corrected by hand; re-processing keeps them.
    edited = models.JSONField(default=list, blank=True)
    family = models.CharField(max_length=600, blank=True, db_index=True)
    version_rank = models.FloatField(default=0)
    is_latest = models.BooleanField(default=True)
    # 0 for the oldest version of its family, counting up (failed versions
    # included): the newest version a person may see is the highest they can read.
    family_position = models.PositiveIntegerField(default=0)
    in_private_dir = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    # Bumped each time the document is queued for indexing or cancelled; a
    # task carries the value it was queued with and drops its work when the
    # value has moved on (apps.library.services.queue).
    queue_token = models.PositiveIntegerField(default=0)
    # Times the parser (or the worker, mid-parse) died on this document's
    # current bytes; the second time it is failed, not retried.
    parser_crashes = models.PositiveSmallIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)
    # What the worker is doing while the status is "parsing" ("describing figure 2 of 5").
    progress = models.CharField(max_length=200, blank=True)
    # Pages read by OCR, and those that yielded nothing: {"pages": [1, 2], "empty": [2]}.
    ocr = models.JSONField(default=dict, blank=True)
    # Record fields from frontmatter (untrusted input, namespaced).
    category = models.CharField(max_length=100, blank=True, db_index=True)
    record_status = models.CharField(max_length=100, blank=True, db_index=True)
    entity = models.CharField(max_length=200, blank=True, db_index=True)
    event_date = models.DateField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)  # x_<key> scalars
    authors = models.CharField(max_length=1000, blank=True)
    doi = models.CharField(max_length=200, blank=True)
    # Web pages and papers: where they came from, and when.
    url = models.CharField(max_length=2000, blank=True, db_index=True)
    site = models.CharField(max_length=200, blank=True)
    arxiv_id = models.CharField(max_length=40, blank=True, db_index=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    # Uploads, web pages and papers: Jarvis's own copy of the original bytes,
    # relative to the data dir (folder documents live at source root + path).
    original = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["source", "family"]),
            models.Index(fields=["source", "path"]),
            models.Index(fields=["-effective_date", "-id"]),
            models.Index(fields=["status"]),
            # Only documents with record fields: the record leg reads their
            # values on every search (apps.library.search.records).
            models.Index(
                fields=["source", "in_private_dir"],
                condition=~models.Q(category="", record_status="", entity=""),
                name="library_doc_records",
            ),
        ]
        ordering = ["source_id", "path"]

    def __str__(self) -> str:
        return self.title or self.path

    @property
    def date_is_weak(self) -> bool:
        return self.date_source in ("", self.DateSource.MTIME)

    @property
    def shown_date(self):
        """The date people and models see; weak (mtime) dates are never shown."""
        return None if self.date_is_weak else self.effective_date


class SourceExclusion(models.Model):
    """A path of a folder source that its owner removed from the library.
    The file stays where it is (Jarvis never deletes a person's file); sync
    simply leaves it out until the owner restores it."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="exclusions")
    path = models.CharField(max_length=1000)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "path"], name="sourceexclusion_unique_path")
        ]

    def __str__(self) -> str:
        return self.path


class DocumentFile(models.Model):
    """One path of a document. Exact duplicates (same bytes) are one Document
    with several files; sync uses size + mtime here to skip unchanged files."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="files")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1000)
    size = models.BigIntegerField()
    mtime_ns = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "path"], name="documentfile_unique_path")
        ]

    def __str__(self) -> str:
        return self.path


class DocumentTag(models.Model):
    """Tags as rows, so a tag filter is an exact match, never a substring."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="tag_rows")
    tag = models.CharField(max_length=100)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "tag"], name="documenttag_unique")
        ]
        indexes = [models.Index(fields=["tag"])]

    def __str__(self) -> str:
        return self.tag


class Chunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    section = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    # The embed header (title, record line) that was embedded with the text.
    header = models.CharField(max_length=800, blank=True)
    text_hash = models.CharField(max_length=64)  # of header + section + text: what was embedded
    page = models.PositiveIntegerField(null=True, blank=True)
    annotation = models.CharField(max_length=12, blank=True)
    section_date = models.DateField(null=True, blank=True)
    origin = models.CharField(max_length=8, blank=True)  # "ocr": recognised in an image
    # Document latest AND, in a file of dated sections, the newest section.
    is_latest = models.BooleanField(default=True)
    # In a section its note marks private: owner-only and local-only whatever
    # the collection's sharing, exactly like a private folder's chunks.
    private = models.BooleanField(default=False)
    # Obsidian block ids and links to blocks, kept out of `text` (never
    # indexed or embedded) for the document page and for block embeds:
    # {"anchors": {id: offset in text}, "links": [[start, end, target, id], …]}.
    marks = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["document_id", "ordinal"]
        indexes = [models.Index(fields=["document", "ordinal"]), models.Index(fields=["text_hash"])]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"

    @property
    def owner_only(self) -> bool:
        """Private folder or private section (needs `document` loaded)."""
        return self.private or self.document.in_private_dir


class ImageDescription(models.Model):
    """What a vision model said an image shows, remembered per collection by
    the hash of the image's bytes: re-parsing an unchanged file (or the same
    figure in another version of it) never asks the model again."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="descriptions")
    image_hash = models.CharField(max_length=64)
    description = models.TextField()
    model_label = models.CharField(max_length=300)  # "<connection>:<model id>" that wrote it
    local_model = models.BooleanField()  # written by a local model
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "image_hash"], name="imagedescription_unique_per_source"
            )
        ]

    def __str__(self) -> str:
        return f"{self.image_hash[:12]} ({self.model_label})"


class IndexState(models.Model):
    """The embedding model the vectors were made with, and which generation of
    vector tables is live. One row (pk=1). `reindex` builds a new generation and
    swaps this pointer in one transaction."""

    model_name = models.CharField(max_length=200)
    dimension = models.PositiveIntegerField()
    generation = models.PositiveIntegerField(default=1)
    # The KNN first pass compares bit codes: signs of a fixed randomised
    # Hadamard projection of each vector (see apps.library.index.codes).
    code_bits = models.PositiveIntegerField(default=768)
    code_seed = models.PositiveIntegerField(default=20261130)
    # Each privacy slice of the vector table is split into this many buckets
    # (by chunk id) so every KNN scan keeps a short top-k (apps.library.index).
    buckets = models.PositiveIntegerField(default=4)
    reindexing_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.model_name} ({self.dimension}d, gen {self.generation})"
