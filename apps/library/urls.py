from django.urls import path

from apps.library.views import adding, browse, collections, documents

app_name = "library"

urlpatterns = [
    path("", browse.index, name="index"),
    path("status/", browse.status, name="status"),
    path("records/", browse.records, name="records"),
    path("add/", adding.page, name="add"),
    path("add/upload/", adding.upload, name="upload"),
    path("add/url/", adding.url, name="add_url"),
    path("doc/<int:pk>/", documents.detail, name="document"),
    path("doc/<int:pk>/status/", adding.document_status, name="document_status"),
    path("doc/<int:pk>/original/", documents.original, name="original"),
    path("doc/<int:pk>/page/<int:number>.png", documents.page_image, name="page_image"),
    path("doc/<int:pk>/edit/", documents.edit, name="edit"),
    path("doc/<int:pk>/remove/", documents.remove, name="remove"),
    path("doc/<int:pk>/reprocess/", documents.reprocess, name="reprocess"),
    path("doc/<int:pk>/cancel/", documents.cancel, name="cancel"),
    path("doc/<int:pk>/retry/", documents.retry, name="retry"),
    path("collections/", collections.index, name="collections"),
    path("collections/register/", collections.register, name="register"),
    path("collections/<int:pk>/", collections.update, name="collection_update"),
    path("collections/<int:pk>/reprocess/", collections.reprocess, name="collection_reprocess"),
    path("collections/<int:pk>/restore/", collections.restore, name="collection_restore"),
]
