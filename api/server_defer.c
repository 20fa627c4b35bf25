/* SPDX-License-Identifier: Apache-2.0 */
/* Requests that wait (a rate measurement over an interval) do not hold a
 * worker thread while they wait: the route asks for a delay, the
 * connection is suspended, and one timer thread resumes it when the delay
 * is over; MHD then calls the request handler again, which finishes the
 * request with the route's continuation. A handful of slow requests would
 * otherwise occupy every worker, and health probes, confirmations and
 * rollbacks behind them would time out.
 *
 * Requests that work long (a transaction, NT_ROUTE_LONG) do not hold one
 * either: each runs on a thread of its own while its connection is
 * suspended. A worker serves many keep-alive connections (a fleet
 * controller's pool, the web view); held by an apply whose driver resets
 * for a ring change, it would leave every one of them unanswered until
 * the apply ends. One thread per request, not a queue: concurrent
 * transactions still meet the engine's lock at once and get their 409. */
#include "api/server_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct nt_deferred {
	struct nt_deferred *next;
	struct MHD_Connection *mc;
	struct timespec due; /* CLOCK_MONOTONIC */
};

bool nt_srv_ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

void nt_srv_due_in_ms(struct timespec *due, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, due);
	due->tv_sec += ms / 1000;
	due->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (due->tv_nsec >= 1000000000L) {
		due->tv_sec++;
		due->tv_nsec -= 1000000000L;
	}
}

static void *timer_main(void *arg)
{
	struct nt_server *s = arg;
	pthread_mutex_lock(&s->defer_lock);
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Resume what is due (everything when stopping). */
		struct nt_deferred **pp = &s->deferred;
		while (*pp) {
			struct nt_deferred *d = *pp;
			if (s->defer_stop || !nt_srv_ts_before(&now, &d->due)) {
				*pp = d->next;
				MHD_resume_connection(d->mc);
				s->ndeferred--;
				free(d);
			} else {
				pp = &d->next;
			}
		}
		if (s->defer_stop)
			break;
		struct timespec wake = { 0, 0 };
		for (struct nt_deferred *d = s->deferred; d; d = d->next)
			if ((wake.tv_sec == 0 && wake.tv_nsec == 0) || nt_srv_ts_before(&d->due, &wake))
				wake = d->due;
		if (wake.tv_sec == 0 && wake.tv_nsec == 0)
			pthread_cond_wait(&s->defer_cond, &s->defer_lock);
		else
			pthread_cond_timedwait(&s->defer_cond, &s->defer_lock, &wake);
	}
	pthread_mutex_unlock(&s->defer_lock);
	return NULL;
}

int nt_srv_defer_init(struct nt_server *s)
{
	pthread_condattr_t ca;
	int r;

	pthread_mutex_init(&s->defer_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->defer_cond, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&s->defer_thread, NULL, timer_main, s);
	if (r != 0) {
		pthread_cond_destroy(&s->defer_cond);
		pthread_mutex_destroy(&s->defer_lock);
		return -r;
	}
	s->defer_running = true;
	return 0;
}

void nt_srv_defer_stop(struct nt_server *s)
{
	if (!s->defer_running)
		return;
	pthread_mutex_lock(&s->defer_lock);
	s->defer_stop = true;
	pthread_cond_signal(&s->defer_cond);
	pthread_mutex_unlock(&s->defer_lock);
	pthread_join(s->defer_thread, NULL);
	/* A transaction under way is finished, not cut (the engine's journal
	 * would recover it at the next start, but it need not): its thread
	 * resumes its connection, which MHD then answers or closes. */
	pthread_mutex_lock(&s->defer_lock);
	while (s->nlong > 0)
		pthread_cond_wait(&s->defer_cond, &s->defer_lock);
	pthread_mutex_unlock(&s->defer_lock);
	s->defer_running = false;
}

void nt_srv_defer_fini(struct nt_server *s)
{
	nt_srv_defer_stop(s);
	if (s->defer_stop) {
		pthread_cond_destroy(&s->defer_cond);
		pthread_mutex_destroy(&s->defer_lock);
		s->defer_stop = false;
	}
}

struct long_job {
	struct nt_server *s;
	struct nt_conn *c;
	struct MHD_Connection *mc;
	nt_route_fn fn;
};

static void *long_main(void *arg)
{
	struct long_job *j = arg;
	struct nt_conn *c = j->c;

	memset(&c->long_resp, 0, sizeof(c->long_resp));
	c->long_rc = j->fn(&c->req, &c->long_resp);
	c->long_done = true;
	pthread_mutex_lock(&j->s->defer_lock);
	/* The worker reads long_* only once resumed: the resume, under the
	 * lock after the writes, orders them. */
	MHD_resume_connection(j->mc);
	j->s->nlong--;
	pthread_cond_broadcast(&j->s->defer_cond);
	pthread_mutex_unlock(&j->s->defer_lock);
	free(j);
	return NULL;
}

int nt_srv_run_long(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
		    nt_route_fn fn)
{
	struct long_job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t th;
	int r;

	if (!j)
		return -ENOMEM;
	*j = (struct long_job){ s, c, mc, fn };
	c->long_done = false;
	pthread_mutex_lock(&s->defer_lock);
	if (s->defer_stop || s->nlong >= NT_MAX_LONG) {
		pthread_mutex_unlock(&s->defer_lock);
		free(j);
		return -EBUSY;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&th, &attr, long_main, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		pthread_mutex_unlock(&s->defer_lock);
		free(j);
		return -r;
	}
	/* Suspended only once the thread exists (nothing to undo when it
	 * cannot be made), still under the lock its resume takes, so the
	 * resume cannot come first. */
	MHD_suspend_connection(mc);
	s->nlong++;
	pthread_mutex_unlock(&s->defer_lock);
	return 0;
}

void nt_srv_response_free(nt_response *r)
{
	nt_response_drop_body(r);
	if (r->defer_state && r->defer_free)
		r->defer_free(r->defer_state);
	memset(r, 0, sizeof(*r));
}

int nt_srv_defer(struct nt_server *s, struct MHD_Connection *mc, unsigned ms)
{
	struct nt_deferred *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->mc = mc;
	nt_srv_due_in_ms(&d->due, ms);
	pthread_mutex_lock(&s->defer_lock);
	if (s->defer_stop || s->ndeferred >= NT_MAX_DEFERRED) {
		pthread_mutex_unlock(&s->defer_lock);
		free(d);
		return -EBUSY;
	}
	/* Suspended under the lock, so the timer cannot resume it first. */
	MHD_suspend_connection(mc);
	d->next = s->deferred;
	s->deferred = d;
	s->ndeferred++;
	pthread_cond_signal(&s->defer_cond);
	pthread_mutex_unlock(&s->defer_lock);
	return 0;
}
