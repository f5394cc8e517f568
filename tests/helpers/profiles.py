"""A details["profile"] as faults(..., profile=True) records it (measure.profile.summarize),
made up: `share` of the samples in clear_page_erms, the rest over `groups`."""

from pagezero.measure.profile import wilson

ERMS = {
    "symbol": "clear_page_erms",
    "instruction": "rep stosb",
    "source": "arch/x86/lib/clear_page_64.S",
}


def sampled(share, samples=2000, groups=("page allocation", "memcg accounting", "other")):
    """The profile of one run whose `samples` put `share` in clear_page_erms."""
    rest = (1 - share) / len(groups)
    k = round(share * samples)
    return {
        "clearing_share": share,
        "clearing_interval": list(wilson(k, samples)) if samples else [0.0, 0.0],
        "clearing_routines": [dict(ERMS, share=share)],
        "samples": samples,
        "groups": {"clearing": share} | dict.fromkeys(groups, rest),
        "symbols": [{"symbol": "clear_page_erms", "share": share, "group": "clearing"}],
        "event": "cpu-clock",
        "lost": 0,
    }
