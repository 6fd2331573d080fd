from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from apps.core.views import home

admin.site.site_header = "Jarvis administration"
admin.site.site_title = "Jarvis admin"

urlpatterns = [
    path("", home, name="home"),
    # One sign-in page, with its throttling, for the admin too.
    path("admin/login/", RedirectView.as_view(pattern_name="accounts:login", query_string=True)),
    path("admin/", admin.site.urls),
    path("", include("apps.accounts.urls")),
    path("settings/assistant/", include("apps.chats.settings_urls")),
    path("", include("apps.core.urls")),
    path("chat/", include("apps.chats.urls")),
    path("library/", include("apps.library.urls")),
    path("projects/", include("apps.projects.urls")),
    path("", include("apps.mcp.urls")),
    path("drafts/", include("apps.drafts.urls")),
    path("digests/", include("apps.digest.urls")),
]
