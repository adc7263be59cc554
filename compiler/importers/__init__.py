"""Importers: other tools' configurations converted into skopt recipes (`skopt import`)."""
