"""The one door for settings (reader.py) and the catalogue of every setting (catalogue.py and the `*_settings.py`
modules it gathers); docs.py writes docs/settings.md from them."""
