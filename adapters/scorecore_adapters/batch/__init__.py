"""Judges that answer through the providers' batch APIs, at the batch price, exactly once.

:class:`OpenAIBatchModel` (OpenAI's Batch API) and :class:`AnthropicBatchModel` (Anthropic's
Message Batches) are judge models like the synchronous ones, built on their request bodies
and reply parsing. Requests from concurrent runs are collected into one provider batch;
every request is journalled (:class:`BatchJournal`, in the judge cache's SQLite file) before
it is sent and its batch id after, so a process killed at any point and started again resumes
the batches it submitted and never submits a request twice. See ``docs/batch-judges.md``.
"""

from scorecore_adapters.batch._journal import (
    BatchJournal,
    BatchJournalWarning,
    JournalBatch,
    JournalRequest,
)
from scorecore_adapters.batch._judge import BatchProgress
from scorecore_adapters.batch._models import AnthropicBatchModel, OpenAIBatchModel
from scorecore_adapters.batch._route import BatchRouting, use_batch_api

__all__ = [
    "AnthropicBatchModel",
    "BatchJournal",
    "BatchJournalWarning",
    "BatchProgress",
    "BatchRouting",
    "JournalBatch",
    "JournalRequest",
    "OpenAIBatchModel",
    "use_batch_api",
]
