/* SPDX-License-Identifier: Apache-2.0 */
/* The descriptions of the configuration keys (cli/options_doc.h). */
#include "cli/options_doc.h"

#include <stddef.h>
#include <string.h>

const nt_cli_option_doc nt_cli_option_docs[] = {
	{ "listen", "127.0.0.1:8470",
	  "Address and port of the HTTP API. A non-loopback address is refused at start unless "
	  "tokens or tls_client_ca are set. Port 0 takes a free port, printed as \"listening on URL\"." },
	{ "root", "/",
	  "The host root every /sys and /proc path is read under. Another root is a captured or "
	  "generated host tree (tests/fixtures/), where ring and channel sizes come from "
	  "ROOT/ethtool/IFACE.json." },
	{ "state-dir", "/var/lib/nettune",
	  "Where the transaction journal and history live (nettune.db, SQLite in WAL mode)." },
	{ "rtt-ms", "10",
	  "The round-trip time the diagnostics size TCP buffers for (the bandwidth-delay product of "
	  "the fastest link)." },
	{ "tokens", NULL,
	  "A file of bearer tokens, one \"NAME SCOPE SECRET\" a line (scope read or apply, '#' "
	  "comments), mode 600 or the agent refuses to start. With it every request but "
	  "/v1/health, /v1/openapi.yaml and /ui/ needs a token. Re-read on SIGHUP." },
	{ "tls-cert", NULL, "A PEM certificate (chain): serve HTTPS. Needs tls_key." },
	{ "tls-key", NULL, "The PEM private key of tls_cert." },
	{ "tls-client-ca", NULL,
	  "A PEM CA: ask every client for a certificate; one that verifies against it authenticates "
	  "with scope apply, its subject DN as the identity." },
	{ "max-body", "1048576",
	  "The largest request body in bytes; a larger one gets 413 as soon as the headers arrive." },
	{ "client-timeout", "30",
	  "Seconds before an idle or slow connection is closed; the whole request head must arrive "
	  "within 10 s (or this, if shorter)." },
	{ "max-connections", "64",
	  "Open connections at once; past three quarters of it, responses close their connection." },
	{ "max-per-client", "half of max_connections",
	  "Open connections from one client address; more are answered 503 and closed. Behind a "
	  "reverse proxy, raise it to max_connections." },
	{ "log-format", "text",
	  "The access and transaction-step log on stderr: text or json (one object a line). "
	  "Changes on SIGHUP." },
	{ "profiles-dir", NULL,
	  "Every NAME.json here is stored as profile NAME at start and on SIGHUP, validated against "
	  "the host; an invalid file is logged with its JSON paths and skipped. The packaged "
	  "configuration sets /etc/nettune/profiles." },
	{ "desired-file", NULL,
	  "A profile held as the desired state, as PUT /v1/desired does: re-applied at start, after "
	  "link events and when something undoes it. Read at start and on SIGHUP; a missing file "
	  "changes nothing. The packaged configuration sets /etc/nettune/desired.json." },
	{ "drift-policy", "repair",
	  "Holding the desired state: repair drift as transactions (reason drift, link-up or boot), "
	  "or report it and change nothing." },
	{ "drift-interval", "30",
	  "Seconds between checks of what has no kernel event (IRQ affinity, sysctls); links and "
	  "ethtool settings are checked 500 ms after their events." },
	{ "held-files", "8192",
	  "IRQ files kept open between reads of the host, so that a read is one pread per file. "
	  "Each costs a descriptor and about 4 KB of kernel memory; 8192 holds every file of a "
	  "host of up to 2730 IRQs; 0 opens them on every read." },
	{ "history-keep", "1000",
	  "Transactions kept in the history, the newest; older finished ones are deleted with their "
	  "steps as each transaction ends. One in flight or pending, the one the desired state came "
	  "from and one a kept rollback names stay. 0 keeps all." },
	{ "plan-ttl", "600",
	  "Seconds a plan (POST /v1/plan) is kept under its id for POST /v1/transactions "
	  "{\"plan_id\": ID} (nettune apply --plan ID), which applies it once. In memory: the newest "
	  "64 plans (at most 8192 steps of them in all) are kept, and a restart forgets them." },
	{ "allow-machine-wide", "no",
	  "Run in a network namespace other than the initial one (ip netns exec, a container), the "
	  "agent refuses at plan time (422) the kinds that change the whole machine: irq_affinity "
	  "and other_irqs, irqbalance, and the sysctls the kernel keeps once for the machine "
	  "(net.core.rmem_max, netdev_budget, rps_sock_flow_entries, tcp_mem, ...). yes plans them "
	  "anyway, with a warning. No effect in the initial namespace. GET /v1/health says which "
	  "namespace the agent runs in." },
	{ "metrics-queues", "no",
	  "yes: GET /metrics also serves each queue's counters from the kernel's qstats-get (Linux 6.9+, "
	  "drivers that keep them), nettune_queue_rx_packets_total{nic,queue} and the like, only the "
	  "counters the kernel reports. Off by default: a series per queue and counter, so a host of 8 "
	  "NICs of 64 queues serves thousands of series with the packets and bytes alone." },
	{ NULL, NULL, NULL },
};

const nt_cli_option_doc *nt_cli_option_doc_find(const char *name)
{
	for (const nt_cli_option_doc *d = nt_cli_option_docs; name && d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}
