"""Form fields shared by the apps."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from apps.core.ids import parse_id


class ModelIdsField(forms.ModelMultipleChoiceField):
    """ModelMultipleChoiceField that refuses an id the database cannot hold
    before querying with it: Django guards `pk=` against overflow but not
    `pk__in=`, where a 20-digit id raised OverflowError (a 500)."""

    def _check_values(self, value):
        for pk in value:
            if parse_id(str(pk)) is None:
                message = self.error_messages["invalid_pk_value"]
                raise ValidationError(message, code="invalid_pk_value", params={"pk": pk})
        return super()._check_values(value)
