"""Documents as PDF (docs/documents.md): the notice of violation, the bill and the attorney
referral packet, each built from a case, its rule version and the village's settings;
``issued`` records and rebuilds them; ``pdf`` is the page they are printed on."""
