"""Admin forms of the outside tools: an MCP server's address or command and
its token (never rendered back), an HTTP tool's URL template (checked here:
scheme and host written out, placeholders only in the path and query)."""

from __future__ import annotations

import shutil
from urllib.parse import urlsplit

from django import forms

from apps.chats.tools import TOOLS
from apps.toolbox.models import HttpTool, McpServer
from apps.toolbox.url_templates import TemplateError, check_template


class McpServerForm(forms.ModelForm):
    # The stored token is never rendered back, not even into the input's value.
    token = forms.CharField(
        label="Bearer token",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Sent as 'Authorization: Bearer …' to a Streamable HTTP server. Leave blank "
        "to keep the stored token.",
    )
    clear_token = forms.BooleanField(label="Clear the stored token", required=False)

    class Meta:
        model = McpServer
        fields = (
            "name",
            "transport",
            "url",
            "command",
            "args",
            "groups",
            "location",
            "timeout_seconds",
            "enabled",
        )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("transport") == McpServer.Transport.HTTP:
            self._check_url(data)
        elif data.get("transport") == McpServer.Transport.STDIO:
            self._check_command(data)
        if data.get("clear_token") and data.get("token"):
            raise forms.ValidationError("Either enter a new token or clear the stored one.")
        return data

    def _check_url(self, data: dict) -> None:
        url = (data.get("url") or "").strip()
        data["url"] = url
        try:
            parts = urlsplit(url)
        except ValueError:
            self.add_error("url", "This address cannot be read.")
            return
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.add_error("url", "Write the server's whole address, starting with https://.")
        elif "@" in parts.netloc:
            self.add_error("url", "Put credentials in the token field, not in the address.")

    def _check_command(self, data: dict) -> None:
        command = (data.get("command") or "").strip()
        data["command"] = command
        args = data.get("args")
        if not command:
            self.add_error("command", "A stdio server needs the program to run.")
        elif shutil.which(command) is None:
            self.add_error("command", f"No program {command!r} found (give its full path).")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            self.add_error("args", 'Write the arguments as a JSON list of strings, e.g. ["serve"].')

    def save(self, commit: bool = True) -> McpServer:
        server = super().save(commit=False)
        if self.cleaned_data.get("clear_token"):
            server.set_token("")
        elif self.cleaned_data.get("token"):
            server.set_token(self.cleaned_data["token"])
        if commit:
            server.save()
            self.save_m2m()
        return server


class HttpToolForm(forms.ModelForm):
    class Meta:
        model = HttpTool
        fields = (
            "name",
            "description",
            "url_template",
            "groups",
            "location",
            "read_only",
            "timeout_seconds",
            "max_kb",
            "enabled",
        )

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if "__" in name:
            raise forms.ValidationError("A double underscore is kept for MCP servers' tools.")
        if name in TOOLS:
            raise forms.ValidationError(f"{name} is one of Jarvis's own tools.")
        return name

    def clean_url_template(self) -> str:
        text = self.cleaned_data["url_template"].strip()
        try:
            check_template(text)
        except TemplateError as exc:
            raise forms.ValidationError(f"Refused: {exc}.") from None
        return text
