from django.urls import path

from apps.agents import views

app_name = "agents"

urlpatterns = [
    path("new/", views.new_chat, name="new"),
    path("<id:chat_id>/mode/", views.mode, name="mode"),
    path("<id:chat_id>/plan/", views.plan, name="plan"),
]
