/* SPDX-License-Identifier: Apache-2.0 */
/* systemd's service notification protocol, spoken directly (no
 * libsystemd): the agent is Type=notify with a watchdog, and this is all
 * it needs of sd-daemon. The protocol is systemd's documented interface
 * (sd_notify(3), sd_watchdog_enabled(3)): one datagram of NEWLINE-separated
 * VAR=value assignments to the AF_UNIX socket named by $NOTIFY_SOCKET (a
 * leading '@' names the abstract namespace); WATCHDOG_USEC (and, when set,
 * WATCHDOG_PID) say that the service manager expects WATCHDOG=1 pings. */
#ifndef NT_SDNOTIFY_H
#define NT_SDNOTIFY_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* Pure: the socket address of a $NOTIFY_SOCKET value into *ADDR and
 * *LEN. 0; -EINVAL when neither an absolute path nor "@name";
 * -ENAMETOOLONG when it does not fit sun_path. */
int nt_sd_notify_addr(const char *value, struct sockaddr_un *addr, socklen_t *len);

/* Send STATE (e.g. "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET without
 * blocking. 1 when sent; 0 when NOTIFY_SOCKET is unset (not run by a
 * service manager); -errno otherwise. */
int nt_sd_notify(const char *state);

/* Pure: the values of WATCHDOG_USEC and WATCHDOG_PID (NULL when unset)
 * judged for process SELF as sd_watchdog_enabled does: 1 and *USEC when
 * the watchdog is on for SELF; 0 when no watchdog is set, or it is meant
 * for another process; -EINVAL when a value is malformed (USEC not a
 * number of microseconds above 0 and below infinity, PID not above 0). */
int nt_sd_watchdog_parse(const char *usec_value, const char *pid_value, pid_t self,
			 uint64_t *usec);

/* nt_sd_watchdog_parse of this process's environment and getpid(). */
int nt_sd_watchdog_enabled(uint64_t *usec);

#endif
