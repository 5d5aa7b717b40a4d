"""The Hugging Face Hub side of publishing (a filtered split, a card section): the client, and the access
check that refuses a push before anything is sent. `huggingface_hub` is imported inside the functions that
use it: it is heavy, and most commands never publish (`overlap --help` must not load it)."""

from __future__ import annotations

from ...errors import OverlapError


def hub_api(token: str | None):
    from huggingface_hub import HfApi  # imported here: heavy, needed only to publish

    return HfApi(token=token)


def check_write_access(api, repo_id: str, repo_type: str = "dataset") -> None:
    """Refuse (exit 2) before any upload when there is no token, the token is read-only, or the repo does
    not exist: pushing must either open a whole PR or leave the Hub untouched."""
    from huggingface_hub import errors as hf_errors  # imported here: heavy, needed only to publish
    from huggingface_hub import get_token

    if not getattr(api, "token", None):
        api.token = get_token()
    if not api.token:
        raise OverlapError("no Hugging Face token: run `hf auth login` or set HF_TOKEN, then push again")
    try:
        who = api.whoami()
        api.repo_info(repo_id, repo_type=repo_type)
    except hf_errors.RepositoryNotFoundError:
        raise OverlapError(f"{repo_id}: no such Hub {repo_type} repo, or this token cannot see it") from None
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: the Hub refused the token ({http_status(exc)}); check it has write "
                           "access") from None
    role = ((who or {}).get("auth") or {}).get("accessToken", {}).get("role")
    if role == "read":
        raise OverlapError(f"{repo_id}: the token is read-only; create a token with write access")


def http_status(exc: Exception) -> str:
    """`HTTP 403` for a Hub HTTP error with a response, else the exception's type name."""
    response = getattr(exc, "response", None)
    return f"HTTP {response.status_code}" if response is not None else type(exc).__name__
