from django.urls import path

from apps.chats import views

app_name = "chats"

urlpatterns = [
    path("", views.index, name="index"),
    path("send/", views.send_new, name="send_new"),
    path("search/", views.search, name="search"),
    path("mentions/", views.mentions, name="mentions"),
    path("attach/", views.attach, name="attach"),
    path("action/<id:pk>/", views.action, name="action"),
    path("approval/<id:pk>/", views.approval, name="approval"),
    path("<id:pk>/", views.detail, name="detail"),
    path("<id:pk>/send/", views.send, name="send"),
    path("<id:pk>/stop/<id:message_id>/", views.stop, name="stop"),
    path("<id:pk>/regenerate/<id:message_id>/", views.regenerate, name="regenerate"),
    path("<id:pk>/edit/<id:message_id>/", views.edit, name="edit"),
    path("<id:pk>/branch/<id:message_id>/", views.branch, name="branch"),
    path("<id:pk>/conversation/", views.conversation, name="conversation"),
    path("<id:pk>/export/", views.export, name="export"),
    path("<id:pk>/rename/", views.rename, name="rename"),
    path("<id:pk>/pin/", views.pin, name="pin"),
    path("<id:pk>/delete/", views.delete, name="delete"),
    path("<id:pk>/notes-only/", views.notes_only, name="notes_only"),
    path("<id:pk>/model/", views.model, name="model"),
    path("<id:pk>/instructions/", views.instructions, name="instructions"),
]
