from django.urls import path

from apps.drafts import views

app_name = "drafts"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create, name="create"),
    path("<id:pk>/", views.editor, name="editor"),
    path("<id:pk>/files/", views.add_file, name="add_file"),
    path("<id:pk>/chat/send/", views.chat_send, name="chat_send"),
    path("<id:pk>/update/", views.update, name="update"),
    path("<id:pk>/delete/", views.delete, name="delete"),
    path("<id:pk>/file/", views.file_read, name="file"),
    path("<id:pk>/file/save/", views.file_save, name="save"),
    path("<id:pk>/history/", views.history, name="history"),
    path("<id:pk>/history/<id:snapshot_id>/", views.snapshot, name="snapshot"),
    path("<id:pk>/history/<id:snapshot_id>/restore/", views.restore, name="restore"),
    path("<id:pk>/proposals/<id:proposal_id>/", views.proposal, name="proposal"),
    path("<id:pk>/proposals/<id:proposal_id>/apply/", views.proposal_apply, name="apply"),
    path("<id:pk>/proposals/<id:proposal_id>/discard/", views.proposal_discard, name="discard"),
    path("<id:pk>/preview/", views.preview, name="preview"),
    path("<id:pk>/build/<str:kind>/", views.build, name="build"),
    path("<id:pk>/build/<str:kind>/<slug:ticket>/", views.build_status, name="build_status"),
    path("<id:pk>/pdf/<str:kind>/", views.pdf, name="pdf"),
]
