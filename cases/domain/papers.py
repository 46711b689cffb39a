"""A document printed from the case (notice, bill, referral packet), recorded with its
digest and what it was built from; a paper, not a fact."""

from __future__ import annotations


from cases import errors
from cases.domain.recording import CaseEvent, CaseState, Stamp
from cases.domain.values import IssuedDocument


class Papers:
    """Documents issued from the case."""

    def issue_document(self, stamp: Stamp, *, document: str, sha256: str, size: int,
                       built_from_version: int, generator: str, inputs: dict) -> None:
        """Record a document built from this case at ``built_from_version`` (the caller
        builds it: ``cases.documents``); dated no earlier than the last fact it prints."""
        self._check_business_order(stamp)
        if built_from_version != self.version:
            raise errors.CommandRejectedError(
                f"the document was built from version {built_from_version} of case "
                f"{self.case_ref}, which is at version {self.version}")
        self._record(self.DocumentIssued, stamp, document=document, sha256=sha256, size=size,
                     built_from_version=built_from_version, generator=generator, inputs=inputs)

    class DocumentIssued(CaseEvent):
        """A document (notice, bill, referral packet) printed from the case: its SHA-256,
        the case version and the inputs it was built from, and the generator that built it,
        so it can be built again and compared (cases/documents/issued.py). It records a
        paper, not a fact: it takes no part in the order of facts."""

        TOPIC = "abate.case:Case.DocumentIssued"
        document: str
        sha256: str
        size: int
        built_from_version: int
        generator: str
        inputs: dict

        def apply_to(self, case: CaseState) -> None:
            case.documents.append(IssuedDocument(
                position=self.originator_version, document=self.document,
                at=self.occurred_at, sha256=self.sha256,
                built_from_version=self.built_from_version))
