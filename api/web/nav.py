"""The main navigation's links shown by role: templates ask ``may_page(role, page)`` (the
role matrix of api.roles) so a link is shown exactly to those the page lets in."""

from __future__ import annotations

from api.roles import may_page
from api.web.render import templates

templates.env.globals["may_page"] = may_page
