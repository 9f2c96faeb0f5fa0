//! Memory management: huge pages, page merging, the vm statistics refresh.

use super::*;

pub(super) fn thp(s: &Scope) -> Finding {
    single(
        s,
        "thp",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        |v| v != "always",
        "madvise",
        (
            "thp",
            "Transparent huge pages",
            "throughput: programs that do not ask for huge pages get small ones",
        ),
    )
}

pub(super) fn ksm(s: &Scope) -> Finding {
    single(
        s,
        "ksm",
        "/sys/kernel/mm/ksm/run",
        |v| v != "1",
        "0",
        (
            "",
            "Kernel same-page merging",
            "memory: identical pages are no longer shared",
        ),
    )
}

pub(super) fn vmstat_interval(s: &Scope) -> Finding {
    single(
        s,
        "vmstat-interval",
        "/proc/sys/vm/stat_interval",
        |v| v.parse::<u64>().is_ok_and(|i| i >= 10),
        "10",
        (
            "",
            "vm statistics interval",
            "memory counters in /proc are up to 10 s stale",
        ),
    )
}
