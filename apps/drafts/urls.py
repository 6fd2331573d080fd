from django.urls import path

from apps.drafts import views

app_name = "drafts"

urlpatterns = [
    path("", views.index, name="index"),
]
