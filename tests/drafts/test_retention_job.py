"""The retention sweep as the worker runs it: instance setting, JobRun record."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.models import JobRun
from apps.drafts.models import Draft
from apps.drafts.tasks import draft_retention
from apps.instance.selectors import instance_settings

pytestmark = pytest.mark.django_db


def age(draft, days: int) -> None:
    Draft.objects.filter(pk=draft.pk).update(updated_at=timezone.now() - timedelta(days=days))


def test_the_sweep_follows_the_instance_setting_and_is_recorded(draft):
    age(draft, 10)
    settings_row = instance_settings()
    settings_row.drafts_retention_days = 14
    settings_row.save()
    draft_retention()
    assert Draft.objects.filter(pk=draft.pk).exists()

    settings_row.drafts_retention_days = 7
    settings_row.save()
    draft_retention()
    assert not Draft.objects.exists()
    run = JobRun.objects.filter(job="draft_retention").latest("started_at")
    assert run.outcome == JobRun.Outcome.OK
    assert run.summary == "removed 1 draft: “Letter to the insurer”"


def test_zero_days_turns_the_sweep_off(draft):
    age(draft, 400)
    settings_row = instance_settings()
    settings_row.drafts_retention_days = 0
    settings_row.save()
    draft_retention()
    assert Draft.objects.filter(pk=draft.pk).exists()
    assert JobRun.objects.get(job="draft_retention").summary == "retention is off (0 days)"
