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
    path("doc/<id:pk>/", documents.detail, name="document"),
    path("doc/<id:pk>/status/", adding.document_status, name="document_status"),
    path("doc/<id:pk>/original/", documents.original, name="original"),
    path("doc/<id:pk>/page/<id:number>.png", documents.page_image, name="page_image"),
    path("doc/<id:pk>/edit/", documents.edit, name="edit"),
    path("doc/<id:pk>/remove/", documents.remove, name="remove"),
    path("doc/<id:pk>/reprocess/", documents.reprocess, name="reprocess"),
    path("doc/<id:pk>/cancel/", documents.cancel, name="cancel"),
    path("doc/<id:pk>/retry/", documents.retry, name="retry"),
    path("collections/", collections.index, name="collections"),
    path("collections/register/", collections.register, name="register"),
    path("collections/<id:pk>/", collections.update, name="collection_update"),
    path("collections/<id:pk>/reprocess/", collections.reprocess, name="collection_reprocess"),
    path("collections/<id:pk>/restore/", collections.restore, name="collection_restore"),
]
