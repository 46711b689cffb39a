"""Every status a case can have (what ``abate cases list --status`` may ask for).

Its own module so the command line offers the choices without importing the domain."""

CASE_STATUSES = ("open", "notice_served", "complied", "cure_period_passed", "abated", "billed",
                 "paid", "appealed", "certified", "cited", "referred", "closed", "reopened")
