/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/irqbalance_client.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef NT_HAVE_SYSTEMD
#include "kernel/dynlib.h"

#include <pthread.h>
#include <systemd/sd-bus.h>

/* sd-bus from libsystemd.so.0, opened the first time a unit is stopped or
 * started (kernel/dynlib.h says why it is not linked). */
static struct {
	typeof(sd_bus_open_system) *open_system;
	typeof(sd_bus_call_method) *call_method;
	typeof(sd_bus_error_free) *error_free;
	typeof(sd_bus_message_unref) *message_unref;
	typeof(sd_bus_flush_close_unref) *flush_close_unref;
} bus_fn;
static int bus_rc;
static char bus_err[256];
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void bus_load(void)
{
	const nt_dynsym syms[] = {
		NT_DYNSYM(sd_bus_open_system, bus_fn.open_system),
		NT_DYNSYM(sd_bus_call_method, bus_fn.call_method),
		NT_DYNSYM(sd_bus_error_free, bus_fn.error_free),
		NT_DYNSYM(sd_bus_message_unref, bus_fn.message_unref),
		NT_DYNSYM(sd_bus_flush_close_unref, bus_fn.flush_close_unref),
	};
	bus_rc = nt_dynlib_open("libsystemd.so.0", syms, sizeof(syms) / sizeof(syms[0]),
				"libsystemd.so.0 is needed to stop and start irqbalance.service "
				"through systemd: apt-get install libsystemd0",
				bus_err, sizeof(bus_err));
}

static int systemd_unit(const char *method, char *err, size_t errsize)
{
	sd_bus *bus = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;

	pthread_once(&bus_once, bus_load);
	if (bus_rc < 0) {
		snprintf(err, errsize, "%s", bus_err);
		return bus_rc;
	}
	int r = bus_fn.open_system(&bus);
	if (r < 0) {
		snprintf(err, errsize, "cannot reach systemd: %s", strerror(-r));
		return r;
	}
	r = bus_fn.call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", method, &e, &reply, "ss",
			       "irqbalance.service", "replace");
	if (r < 0)
		snprintf(err, errsize, "systemd %s irqbalance.service: %s", method,
			 e.message ? e.message : strerror(-r));
	bus_fn.error_free(&e);
	bus_fn.message_unref(reply);
	bus_fn.flush_close_unref(bus);
	return r < 0 ? r : 0;
}
#else
static int systemd_unit(const char *method, char *err, size_t errsize)
{
	snprintf(err, errsize, "built without sd-bus: cannot %s irqbalance.service", method);
	return -EOPNOTSUPP;
}
#endif

static bool pid_is_irqbalance(const nt_ctx *ctx, int pid)
{
	char comm[64], stat[512];
	if (nt_read_str(ctx, comm, sizeof(comm), "/proc/%d/comm", pid) < 0 || strcmp(comm, "irqbalance") != 0)
		return false;
	/* A zombie keeps its name but runs nothing (state after the last ')'
	 * of /proc/PID/stat). Fixture trees may have no stat file. */
	if (nt_read_str(ctx, stat, sizeof(stat), "/proc/%d/stat", pid) >= 0) {
		const char *rp = strrchr(stat, ')');
		if (rp && (rp[1] == ' ') && (rp[2] == 'Z' || rp[2] == 'X'))
			return false;
	}
	return true;
}

static void read_cmdline(const nt_ctx *ctx, int pid, char *out, size_t size)
{
	char *raw = NULL;
	int n = nt_read_all(ctx, &raw, "/proc/%d/cmdline", pid);
	out[0] = '\0';
	if (n <= 0) {
		free(raw);
		return;
	}
	/* argv is NUL-separated; irqbalance's arguments (--foreground,
	 * --banirq=N, --policyscript=PATH) hold no spaces, so spaces join. */
	size_t len = (size_t)n;
	while (len > 0 && raw[len - 1] == '\0')
		len--;
	raw[len] = '\0';
	/* argv[0] may be a bare name; the executable's real path is what can
	 * start it again. */
	char exe[PATH_MAX];
	const char *args = raw + strlen(raw);
	if (nt_readlink(ctx, exe, sizeof(exe), "/proc/%d/exe", pid) < 0)
		snprintf(exe, sizeof(exe), "%s", raw);
	size_t o = (size_t)snprintf(out, size, "%s", exe);
	for (const char *a = args; a < raw + len && o + 1 < size; a++)
		out[o++] = *a ? *a : ' ';
	out[o < size ? o : size - 1] = '\0';
	free(raw);
}

int nt_irqbalance_controllable(const nt_ctx *ctx, char *err, size_t errsize)
{
	if (ctx->live)
		return 0;
	if (err && errsize)
		snprintf(err, errsize, "irqbalance is controlled only on the live host (--root /)");
	return -EOPNOTSUPP;
}

/* The daemon by its socket file: P->pid and P->socket_path, or nothing. */
static void find_by_socket(const nt_ctx *ctx, nt_irqbalance_proc *p)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (nt_path(ctx, path, sizeof(path), "/run/irqbalance") < 0 || !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, "irqbalance%d.sock", &pid) == 1 && pid_is_irqbalance(ctx, pid)) {
			p->pid = pid;
			nt_path(ctx, p->socket_path, sizeof(p->socket_path), "/run/irqbalance/%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

/* The daemon among every process: its PID, 0, or -errno. A name read per
 * process: thousands on a big host, kernel threads included. */
static int scan_proc(const nt_ctx *ctx)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int pid = 0;

	if (nt_path(ctx, path, sizeof(path), "/proc") < 0 || !(d = opendir(path)))
		return -errno;
	while (!pid && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]) && pid_is_irqbalance(ctx, atoi(de->d_name)))
			pid = atoi(de->d_name);
	closedir(d);
	return pid;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nt_irqbalance_memo_init(nt_irqbalance_memo *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
	m->max_age_ms = NT_IRQBALANCE_SCAN_MS;
}

void nt_irqbalance_memo_destroy(nt_irqbalance_memo *m)
{
	pthread_mutex_destroy(&m->mu);
}

void nt_irqbalance_memo_found(nt_irqbalance_memo *m, int pid)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->pid = pid;
	m->scanned = true;
	pthread_mutex_unlock(&m->mu);
}

/* P's PID by a scan of /proc, or M's: the daemon it last found while it
 * still runs under that PID, or none while its last scan that found none is
 * younger than M->max_age_ms. */
static int find_by_scan(const nt_ctx *ctx, nt_irqbalance_memo *m, nt_irqbalance_proc *p)
{
	int pid;

	if (!m) {
		pid = scan_proc(ctx);
	} else {
		pthread_mutex_lock(&m->mu);
		int64_t now = mono_ms();
		if (m->scanned && m->pid && pid_is_irqbalance(ctx, m->pid)) {
			pid = m->pid;
		} else if (m->scanned && !m->pid && now - m->scanned_ms < m->max_age_ms) {
			pid = 0;
		} else {
			pid = scan_proc(ctx);
			m->scanned = pid >= 0;
			m->scanned_ms = now;
			m->pid = pid > 0 ? pid : 0;
		}
		pthread_mutex_unlock(&m->mu);
	}
	if (pid < 0)
		return pid;
	p->pid = pid;
	return 0;
}

int nt_irqbalance_find(const nt_ctx *ctx, nt_irqbalance_proc *p)
{
	return nt_irqbalance_find_memo(ctx, NULL, p);
}

int nt_irqbalance_find_memo(const nt_ctx *ctx, nt_irqbalance_memo *m, nt_irqbalance_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->systemd = nt_exists(ctx, "/run/systemd/system");
	find_by_socket(ctx, p);
	if (p->pid) {
		/* Still found by its PID should the socket file go. */
		nt_irqbalance_memo_found(m, p->pid);
	} else {
		int r = find_by_scan(ctx, m, p);
		if (r < 0)
			return r;
	}
	if (p->pid) {
		read_cmdline(ctx, p->pid, p->cmdline, sizeof(p->cmdline));
		/* Under systemd only when the daemon is the unit's: one started
		 * by hand on a systemd host is stopped and started by hand. */
		char *cg = NULL;
		if (p->systemd && nt_read_all(ctx, &cg, "/proc/%d/cgroup", p->pid) >= 0)
			p->systemd = strstr(cg, "/irqbalance.service") != NULL;
		else
			p->systemd = false;
		free(cg);
	}
	return 0;
}

static int connect_daemon(const nt_irqbalance_proc *p)
{
	struct sockaddr_un addr;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (p->socket_path[0]) {
		if (strlen(p->socket_path) >= sizeof(addr.sun_path)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		strcpy(addr.sun_path, p->socket_path);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(addr.sun_path) + 1);
	} else {
		/* Without /run/irqbalance the daemon binds the abstract name of
		 * sizeof(sun_path) zero bytes. */
		len = sizeof(addr);
	}
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int nt_irqbalance_command(const nt_irqbalance_proc *p, const char *cmd, char *reply, size_t size)
{
	int fd = connect_daemon(p);
	if (fd < 0)
		return fd;
	/* irqbalance only obeys a root sender and reads who that is from
	 * SCM_CREDENTIALS, so the credentials travel with the command. */
	struct iovec iov = { (void *)cmd, strlen(cmd) };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(struct ucred));
	struct ucred cred = { getpid(), getuid(), getgid() };
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	int r = 0;
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0) {
		r = -errno;
		goto out;
	}
	shutdown(fd, SHUT_WR);
	size_t len = 0;
	if (reply && size) {
		for (;;) {
			ssize_t n = recv(fd, reply + len, size - 1 - len, 0);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				r = -errno;
				goto out;
			}
			if (n == 0 || (len += (size_t)n) >= size - 1)
				break;
		}
		reply[len] = '\0';
	}
	r = (int)len;
out:
	close(fd);
	return r;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int nt_irqbalance_parse_banned(const char *reply, char *list, size_t size)
{
	int irqs[4096], n = 0;
	const char *p = reply;

	if (strncmp(reply, "SLEEP ", 6) != 0)
		return NT_EPARSE;
	while ((p = strstr(p, "IRQ ")) != NULL) {
		char *end;
		long v = strtol(p + 4, &end, 10);
		if (end == p + 4 || v < 0)
			return NT_EPARSE;
		if (n < (int)(sizeof(irqs) / sizeof(irqs[0])))
			irqs[n++] = (int)v;
		p = end;
	}
	qsort(irqs, (size_t)n, sizeof(int), cmp_int);
	size_t len = 0;
	list[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i && irqs[i] == irqs[i - 1])
			continue;
		int w = snprintf(list + len, size - len, "%s%d", len ? " " : "", irqs[i]);
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return 0;
}

int nt_irqbalance_stop(const nt_irqbalance_proc *p, char *err, size_t errsize)
{
	/* Signals reach only the live host's processes. */
	const nt_ctx root_ctx = { .root = "", .live = true };
	if (p->pid <= 0)
		return 0;
	/* A unit killed behind systemd's back would be started outside it
	 * later; ask systemd instead. */
	if (p->systemd)
		return systemd_unit("StopUnit", err, errsize);
	if (kill(p->pid, SIGTERM) < 0)
		return errno == ESRCH ? 0 : -errno;
	for (int i = 0; i < 500; i++) {
		/* Gone, or a zombie nobody reaps yet (it runs nothing). */
		if ((kill(p->pid, 0) < 0 && errno == ESRCH) || !pid_is_irqbalance(&root_ctx, p->pid))
			return 0;
		/* Our own child (tests) must be reaped to disappear. */
		waitpid(p->pid, NULL, WNOHANG);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

int nt_irqbalance_start(const char *cmdline, char *err, size_t errsize)
{
	char buf[1024];
	char *argv[64];
	int argc = 0;

	if (!cmdline || !*cmdline)
		return -EINVAL;
	if (strcmp(cmdline, "systemd") == 0)
		return systemd_unit("StartUnit", err, errsize);
	snprintf(buf, sizeof(buf), "%s", cmdline);
	for (char *s = buf; s && argc < 63;) {
		argv[argc++] = s;
		s = strchr(s, ' ');
		if (s)
			*s++ = '\0';
	}
	argv[argc] = NULL;
	/* Only the daemon that was stopped is started again, from the
	 * command line it ran with; a path that is not absolute is refused
	 * rather than looked up. */
	if (argv[0][0] != '/' || strstr(argv[0], "irqbalance") == NULL) {
		snprintf(err, errsize, "will not start '%s': not an absolute path to irqbalance", argv[0]);
		return -EINVAL;
	}
	/* Double fork: the daemon is not our child and outlives the agent. */
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The agent blocks SIGTERM/SIGINT in its threads (it takes them
		 * with sigwait); a mask survives exec, and a daemon started with
		 * SIGTERM blocked could never be stopped again. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setsid();
		pid_t p2 = fork();
		if (p2 != 0)
			_exit(p2 < 0 ? 1 : 0);
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}
