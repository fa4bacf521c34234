"""The sandbox's domain: the in-memory portal and every business rule of the Invoicing API v2."""

from .portal import Portal

__all__ = ["Portal"]
