from django.contrib import admin
from django.urls import include, path

from apps.accounts.views import admin_login_view
from apps.core.views import favicon, home

admin.site.site_header = "Jarvis administration"
admin.site.site_title = "Jarvis admin"

urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", favicon, name="favicon"),
    # One sign-in page, with its throttling, for the admin too; a member who is
    # not an admin is told so there.
    path("admin/login/", admin_login_view, name="admin_login"),
    path("admin/", admin.site.urls),
    path("", include("apps.accounts.urls")),
    path("settings/assistant/", include("apps.chats.settings_urls")),
    path("settings/ssh/", include("apps.agents.settings_urls")),
    path("", include("apps.core.urls")),
    path("chat/agent/", include("apps.agents.urls")),
    path("chat/web/", include("apps.websearch.urls")),
    path("chat/", include("apps.chats.urls")),
    path("library/", include("apps.library.urls")),
    path("projects/", include("apps.projects.urls")),
    path("", include("apps.mcp.urls")),
    path("drafts/", include("apps.drafts.urls")),
    path("digests/", include("apps.digest.urls")),
    path("voice/", include("apps.voice.urls")),
]
