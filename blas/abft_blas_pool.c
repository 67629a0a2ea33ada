/* libabft_blas.so: the threads of the drop-in's checksum passes (abft_blas_tsmm.c).
 *
 * A pool of worker threads that sleep on a condition variable between jobs: none is started
 * before the first parallel pass, and none spins while the host BLAS's own threads run the
 * product that follows (an OpenMP team, whose workers spin for a while after each region
 * by default, took a core from a multi-threaded BLAS on every call). The caller takes part
 * in its job; items are handed out one at a time, and each writes only its own outputs, so
 * the results do not depend on which thread runs which item. One job at a time: a caller
 * that finds the pool busy (another thread's call) runs its items alone. The pool follows
 * fork (the child starts without workers) and is stopped when the library is unloaded. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "abft_blas_internal.h"

enum { MAX_WORKERS = 255 };

static struct pool {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    pthread_t tid[MAX_WORKERS];
    unsigned long born[MAX_WORKERS]; /* the jobs published when each worker was started */
    int nworkers;         /* started */
    unsigned long gen;    /* jobs published */
    void (*fn)(void *, int64_t);
    void *ctx;
    int64_t n;
    atomic_llong next;    /* the next item to take */
    int want;             /* workers taking part in the current job */
    int active;           /* of those, still working */
    int busy, stop;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER,
         .work_cv = PTHREAD_COND_INITIALIZER,
         .done_cv = PTHREAD_COND_INITIALIZER};
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void take_items(void (*fn)(void *, int64_t), void *ctx, int64_t n) {
    for (;;) {
        const int64_t i = atomic_fetch_add(&P.next, 1);
        if (i >= n) break;
        fn(ctx, i);
    }
}

static void *worker(void *arg) {
    const int id = (int)(intptr_t)arg;
    pthread_mutex_lock(&P.mu);
    unsigned long seen = P.born[id]; /* a job published since is this worker's too */
    for (;;) {
        while (P.gen == seen && !P.stop) pthread_cond_wait(&P.work_cv, &P.mu);
        if (P.stop) break;
        seen = P.gen;
        if (id >= P.want) continue; /* not needed for this job */
        void (*fn)(void *, int64_t) = P.fn;
        void *ctx = P.ctx;
        const int64_t n = P.n;
        pthread_mutex_unlock(&P.mu);
        take_items(fn, ctx, n);
        pthread_mutex_lock(&P.mu);
        if (--P.active == 0) pthread_cond_signal(&P.done_cv);
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

/* the child of a fork has none of the parent's workers */
static void atfork_child(void) {
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.work_cv, NULL);
    pthread_cond_init(&P.done_cv, NULL);
    P.nworkers = 0, P.busy = 0, P.want = 0, P.active = 0;
}
static void atfork_register(void) { pthread_atfork(NULL, NULL, atfork_child); }

int abft_blas_pool_threads(void) {
#ifdef _OPENMP
    /* the OpenMP setting of the calling thread (OMP_NUM_THREADS, omp_set_num_threads); one
     * inside a parallel region of the program */
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

void abft_blas_parallel(int64_t n, int threads, void (*fn)(void *ctx, int64_t item), void *ctx) {
    if (threads > n) threads = (int)n;
    if (threads > MAX_WORKERS + 1) threads = MAX_WORKERS + 1;
    if (threads <= 1) {
        for (int64_t i = 0; i < n; ++i) fn(ctx, i);
        return;
    }
    pthread_once(&atfork_once, atfork_register);
    pthread_mutex_lock(&P.mu);
    if (P.busy || P.stop) { /* another thread's job: this one alone */
        pthread_mutex_unlock(&P.mu);
        for (int64_t i = 0; i < n; ++i) fn(ctx, i);
        return;
    }
    P.busy = 1;
    while (P.nworkers < threads - 1) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 1 << 20);
        P.born[P.nworkers] = P.gen;
        const int ok = pthread_create(&P.tid[P.nworkers], &attr, worker,
                                      (void *)(intptr_t)P.nworkers) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break; /* fewer workers: the items are shared out all the same */
        ++P.nworkers;
    }
    const int want = P.nworkers < threads - 1 ? P.nworkers : threads - 1;
    P.fn = fn, P.ctx = ctx, P.n = n;
    atomic_store(&P.next, 0);
    P.want = want, P.active = want;
    ++P.gen;
    pthread_cond_broadcast(&P.work_cv);
    pthread_mutex_unlock(&P.mu);
    take_items(fn, ctx, n);
    pthread_mutex_lock(&P.mu);
    while (P.active > 0) pthread_cond_wait(&P.done_cv, &P.mu);
    P.busy = 0;
    pthread_mutex_unlock(&P.mu);
}

/* unloaded (dlclose) or at exit: the workers end; joined when no job is running */
__attribute__((destructor)) static void pool_fini(void) {
    pthread_mutex_lock(&P.mu);
    const int idle = !P.busy;
    P.stop = 1;
    pthread_cond_broadcast(&P.work_cv);
    const int n = P.nworkers;
    pthread_mutex_unlock(&P.mu);
    if (idle)
        for (int i = 0; i < n; ++i) pthread_join(P.tid[i], NULL);
}
