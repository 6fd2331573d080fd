"""Django admin for outside tools: MCP servers with a Check that lists and
stores their tools (or says why the listing was refused), and HTTP tools."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from apps.toolbox.forms import HttpToolForm, McpServerForm
from apps.toolbox.models import HttpTool, McpServer, McpTool
from apps.toolbox.services import mcp_server_check, mcp_server_renamed


class McpToolInline(admin.TabularInline):
    model = McpTool
    fields = ("exposed_name", "description", "enabled", "read_only")
    readonly_fields = ("exposed_name", "description")
    extra = 0
    can_delete = False
    verbose_name_plural = "Tools (from the last good check)"

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # only a check adds tools: what the server really lists


@admin.register(McpServer)
class McpServerAdmin(admin.ModelAdmin):
    form = McpServerForm
    list_display = ("name", "transport", "enabled", "tool_count", "last_check", "check_status")
    list_filter = ("transport", "enabled", "location")
    readonly_fields = ("stored_token", "checked_at", "check_error")
    filter_horizontal = ("groups",)
    fieldsets = (
        (
            None,
            {"fields": ("name", "transport", "enabled", "groups", "location", "timeout_seconds")},
        ),
        ("Streamable HTTP", {"fields": ("url", "stored_token", "token", "clear_token")}),
        ("stdio", {"fields": ("command", "args")}),
        ("Last check", {"fields": ("checked_at", "check_error")}),
    )
    inlines = (McpToolInline,)
    actions = ("check_servers",)
    change_form_template = "admin/toolbox/mcpserver/change_form.html"

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        if change and "name" in form.changed_data:
            mcp_server_renamed(server=obj)

    def get_urls(self):
        check = path(
            "<path:object_id>/check/",
            self.admin_site.admin_view(require_POST(self.check_view)),
            name="toolbox_mcpserver_check",
        )
        return [check, *super().get_urls()]

    def check_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        server = self.get_object(request, object_id)
        if server is None or not self.has_change_permission(request, server):
            raise Http404
        self._check(request, server)
        return HttpResponseRedirect(reverse("admin:toolbox_mcpserver_change", args=[server.pk]))

    def _check(self, request: HttpRequest, server: McpServer) -> None:
        report = mcp_server_check(server=server)
        if report.ok:
            self.message_user(request, report.message, messages.SUCCESS)
        else:
            self.message_user(
                request, f"The server {server.name}: {report.message}", messages.ERROR
            )

    @admin.action(description="Check: list and store the servers' tools")
    def check_servers(self, request: HttpRequest, queryset: QuerySet[McpServer]) -> None:
        for server in queryset:
            self._check(request, server)

    @admin.display(description="tools")
    def tool_count(self, obj: McpServer) -> int:
        return obj.tools.count()

    @admin.display(description="last check", ordering="checked_at")
    def last_check(self, obj: McpServer):
        return obj.checked_at or "never"

    @admin.display(description="check")
    def check_status(self, obj: McpServer) -> str:
        if obj.checked_at is None:
            return "—"
        return obj.check_error or "ok"

    @admin.display(description="stored token")
    def stored_token(self, obj: McpServer) -> str:
        return obj.masked_token or "—"


@admin.register(HttpTool)
class HttpToolAdmin(admin.ModelAdmin):
    form = HttpToolForm
    list_display = ("name", "url_template", "enabled", "read_only", "location")
    list_filter = ("enabled", "read_only", "location")
    search_fields = ("name", "url_template", "description")
    filter_horizontal = ("groups",)
