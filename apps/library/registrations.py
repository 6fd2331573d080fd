"""What the library plugs into the floors below it (imported once per process
by CoreConfig.ready(); docs/architecture.md, "Floors")."""

from apps.instance.advice import settings_advice_register
from apps.library.languages import embedding_model_advice

# The instance settings page says when the English default embedding model
# meets a library mostly written in another language.
settings_advice_register(embedding_model_advice)
