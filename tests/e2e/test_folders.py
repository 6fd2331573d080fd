"""End to end: chat folders in the sidebar. A person makes a folder, drags a
chat into it, closes it, and finds it closed after a reload; the keyboard's
"Move to folder" menu does the same without dragging; it all fits a phone."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat, Folder
from tests.e2e.conftest import screenshot
from tests.e2e.test_axe import RUN_AXE_JS
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture
def chats(owner):
    return [
        Chat.objects.create(owner=owner, title="Bin collection days"),
        Chat.objects.create(owner=owner, title="Boiler service"),
    ]


def make_folder(page, name: str) -> None:
    page.click("[data-testid=new-folder] summary")
    page.fill("[data-testid=new-folder-name]", name)
    page.click("[data-testid=new-folder-create]")
    page.locator("[data-testid=folder-name]", has_text=name).wait_for()


def folder(page, name: str):
    return page.locator(
        "[data-testid=folder]", has=page.locator("[data-testid=folder-name]", has_text=name)
    )


def test_a_chat_dragged_into_a_folder_stays_there_and_collapse_survives_reload(
    page, live_server_url, owner, chats
):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    make_folder(page, "House")
    house = folder(page, "House")
    row = page.locator("[data-testid=chat-list] [data-testid=chat-row]", has_text="Boiler service")
    row.drag_to(house.locator(".chat-folder__head"))
    house.locator("[data-testid=folder-chats]", has_text="Boiler service").wait_for()
    assert house.locator("[data-testid=folder-count]").text_content() == "1"
    # Only the dragged chat moved.
    loose = page.locator("[data-testid=chat-list] .chat-list__title").all_text_contents()
    assert [title.strip() for title in loose] == ["Bin collection days"]
    assert Chat.objects.get(title="Boiler service").folder.name == "House"
    assert Chat.objects.get(title="Bin collection days").folder is None

    toggle = house.locator("[data-testid=folder-toggle]")
    assert toggle.get_attribute("aria-expanded") == "true"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert house.locator("[data-testid=folder-chats]").is_hidden()
    for _ in range(50):  # the save is a fetch in the background
        if Folder.objects.get(name="House").collapsed:
            break
        page.wait_for_timeout(100)
    page.reload()
    house = folder(page, "House")
    assert house.locator("[data-testid=folder-toggle]").get_attribute("aria-expanded") == "false"
    assert house.locator("[data-testid=folder-chats]").is_hidden()
    # Opened again, it shows its chat.
    house.locator("[data-testid=folder-toggle]").click()
    assert house.locator("[data-testid=folder-chats]", has_text="Boiler service").is_visible()
    screenshot(page, "chat-folders")
    assert errors == []


def test_the_move_menu_moves_a_chat_without_dragging(page, live_server_url, owner, chats):
    Folder.objects.create(owner=owner, name="Trips")
    sign_in(page, live_server_url)
    row = page.locator("[data-testid=chat-row]", has_text="Bin collection days")
    row.locator("[data-testid=move-menu]").focus()
    page.keyboard.press("Enter")  # the menu opens from the keyboard
    row.locator("[data-testid=move-select]").select_option(label="Trips")
    row.locator("[data-testid=move-submit]").press("Enter")
    trips = folder(page, "Trips")
    trips.locator("[data-testid=folder-chats]", has_text="Bin collection days").wait_for()
    assert Chat.objects.get(title="Bin collection days").folder.name == "Trips"


def test_renaming_and_deleting_a_folder_from_its_menu(page, live_server_url, owner, chats):
    house = Folder.objects.create(owner=owner, name="Hosue")
    Chat.objects.filter(title="Boiler service").update(folder=house)
    sign_in(page, live_server_url)
    menu = folder(page, "Hosue").locator(".chat-folder__more")
    menu.locator("summary").click()
    menu.locator("[data-testid=folder-rename-name]").fill("House")
    menu.locator("[data-testid=folder-rename]").click()
    page.locator("[data-testid=folder-name]", has_text="House").wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    menu = folder(page, "House").locator(".chat-folder__more")
    menu.locator("summary").click()
    menu.locator("[data-testid=folder-delete]").click()
    page.locator("[data-testid=folder]").wait_for(state="detached")
    # Its chat is back among the others.
    loose = page.locator("[data-testid=chat-list] .chat-list__title").all_text_contents()
    assert "Boiler service" in [title.strip() for title in loose]
    assert Chat.objects.get(title="Boiler service").folder is None


def test_folders_fit_a_phone(page, live_server_url, owner, chats):
    house = Folder.objects.create(owner=owner, name="A folder with a rather long name for a phone")
    Chat.objects.filter(title="Boiler service").update(folder=house)
    page.set_viewport_size({"width": 390, "height": 800})
    sign_in(page, live_server_url)
    page.click(".chat-bar [data-drawer-toggle]")
    sidebar = page.locator("#chat-sidebar")
    toggle = sidebar.locator("[data-testid=folder-toggle]")
    toggle.wait_for()
    row = sidebar.locator("[data-testid=chat-row]", has_text="Bin collection days")
    row.locator("[data-testid=move-menu]").click()
    select = row.locator("[data-testid=move-select]")
    assert select.is_visible()
    for box in (toggle.bounding_box(), select.bounding_box(), row.bounding_box()):
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, "phone-chat-folders")


AXE_RULES = [
    "label",
    "button-name",
    "link-name",
    "select-name",
    "color-contrast",
    "aria-allowed-attr",
    "aria-valid-attr-value",
    "aria-required-children",
    "aria-required-parent",
    "list",
    "listitem",
    "nested-interactive",
    "duplicate-id",
]


def test_folders_menus_and_the_command_list_pass_axe(page, live_server_url, owner, chats):
    house = Folder.objects.create(owner=owner, name="House")
    Folder.objects.create(owner=owner, name="Trips", collapsed=True)
    Chat.objects.filter(title="Boiler service").update(folder=house)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chats[0].pk}/")
    page.click("[data-testid=new-folder] summary")
    page.locator("[data-testid=chat-row]", has_text="Boiler service").locator(
        "[data-testid=move-menu]"
    ).click()
    folder(page, "House").locator(".chat-folder__more summary").click()
    page.click("#composer-text")
    page.keyboard.type("/")
    page.get_by_role("listbox", name="Commands").wait_for()
    page.add_script_tag(url=f"{live_server_url}/static/vendor/axe-core/axe.min.js")
    assert page.evaluate(RUN_AXE_JS, AXE_RULES) == []
