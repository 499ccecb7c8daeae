/* phasekit region markers for C and C++ (phasekit.regions; Silva 2024 section 3.2).
 *
 *   #include "phasekit_regions.h"
 *   phasekit_region_start("solve");  ...  phasekit_region_stop("solve");
 *
 * Under `phasekit campaign run` the environment variable PHASEKIT_REGIONS names a file;
 * each marker appends one line "S|E <region> <thread id> <CLOCK_MONOTONIC ns>" with a single
 * write(2) on an O_APPEND descriptor (atomic for lines shorter than PIPE_BUF: no lock needed
 * between threads). Without the variable the markers do nothing. Region names: no spaces.
 * Header-only; Linux (gettid via syscall). */
#ifndef PHASEKIT_REGIONS_H
#define PHASEKIT_REGIONS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int phasekit_regions_fd_ = -2; /* -2: not opened yet, -1: disabled */

static inline void phasekit_region_mark_(char kind, const char *name) {
    if (phasekit_regions_fd_ == -2) {
        const char *path = getenv("PHASEKIT_REGIONS");
        int fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
        /* a racing first call from two threads opens twice: harmless, one fd leaks */
        __atomic_store_n(&phasekit_regions_fd_, fd, __ATOMIC_RELEASE);
    }
    int fd = __atomic_load_n(&phasekit_regions_fd_, __ATOMIC_ACQUIRE);
    if (fd < 0) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char line[256];
    int n = snprintf(line, sizeof line, "%c %s %ld %lld\n", kind, name, (long)syscall(SYS_gettid),
                     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    if (n > 0 && n < (int)sizeof line) {
        ssize_t written = write(fd, line, (size_t)n);
        (void)written;
    }
}

static inline void phasekit_region_start(const char *name) { phasekit_region_mark_('S', name); }
static inline void phasekit_region_stop(const char *name) { phasekit_region_mark_('E', name); }

#endif /* PHASEKIT_REGIONS_H */
