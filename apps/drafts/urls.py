from django.urls import path

from apps.drafts import views

app_name = "drafts"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create, name="create"),
    path("<int:pk>/", views.editor, name="editor"),
    path("<int:pk>/files/", views.add_file, name="add_file"),
    path("<int:pk>/update/", views.update, name="update"),
    path("<int:pk>/delete/", views.delete, name="delete"),
    path("<int:pk>/file/", views.file_read, name="file"),
    path("<int:pk>/file/save/", views.file_save, name="save"),
    path("<int:pk>/history/", views.history, name="history"),
    path("<int:pk>/history/<int:snapshot_id>/", views.snapshot, name="snapshot"),
    path("<int:pk>/history/<int:snapshot_id>/restore/", views.restore, name="restore"),
    path("<int:pk>/proposals/<int:proposal_id>/", views.proposal, name="proposal"),
    path("<int:pk>/proposals/<int:proposal_id>/apply/", views.proposal_apply, name="apply"),
    path("<int:pk>/proposals/<int:proposal_id>/discard/", views.proposal_discard, name="discard"),
    path("<int:pk>/preview/", views.preview, name="preview"),
    path("<int:pk>/build/<str:kind>/", views.build, name="build"),
    path("<int:pk>/build/<str:kind>/<slug:ticket>/", views.build_status, name="build_status"),
    path("<int:pk>/pdf/<str:kind>/", views.pdf, name="pdf"),
]
