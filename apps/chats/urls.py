from django.urls import path

from apps.chats import ask_views, folder_views, views

app_name = "chats"

urlpatterns = [
    path("", views.index, name="index"),
    path("send/", views.send_new, name="send_new"),
    path("search/", views.search, name="search"),
    path("mentions/", views.mentions, name="mentions"),
    path("attach/", views.attach, name="attach"),
    path("action/<id:pk>/", views.action, name="action"),
    path("approval/<id:pk>/", views.approval, name="approval"),
    path("ask/<id:pk>/", ask_views.answer, name="ask_answer"),
    path("folders/", folder_views.folder_create, name="folder_create"),
    path("folders/<id:pk>/rename/", folder_views.folder_rename, name="folder_rename"),
    path("folders/<id:pk>/delete/", folder_views.folder_delete, name="folder_delete"),
    path("folders/<id:pk>/collapse/", folder_views.folder_collapse, name="folder_collapse"),
    path("<id:pk>/folder/", folder_views.chat_move, name="chat_move"),
    path("<id:pk>/private/", views.private, name="private"),
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
