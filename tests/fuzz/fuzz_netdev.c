/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the `netdev` family's replies (kernel/netdev.h). The
 * input is cut into datagrams at the lengths its first bytes give, as a
 * multi-part dump arrives, and each goes through the dump parser and the
 * family-id parser; every entry kept must carry what identifies it. */
#include "kernel/netdev.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nt_netdev nd = { 0 };
	size_t off = 0;
	int id;
	/* Byte 0: how many datagrams (1..4); then each one's 16-bit length. */
	int parts = size ? (data[0] & 3) + 1 : 1;
	size_t hdr = 1 + 2 * (size_t)parts;
	if (size < hdr)
		return 0;
	off = hdr;
	for (int i = 0; i < parts && off <= size; i++) {
		size_t n = (size_t)data[1 + 2 * i] | (size_t)data[2 + 2 * i] << 8;
		if (i == parts - 1 || n > size - off)
			n = size - off;
		/* A private copy, so reads past the datagram are caught. */
		unsigned char *buf = malloc(n ? n : 1);
		if (!buf)
			break;
		memcpy(buf, data + off, n);
		int r = nt_netdev_parse_dump(&nd, 0x22, buf, n);
		(void)nt_netdev_parse_family(buf, n, &id);
		uint64_t ops;
		(void)nt_netdev_parse_family_ops(buf, n, &id, &ops);
		free(buf);
		off += n;
		if (r != 0)
			break;
	}
	for (size_t i = 0; i < nd.nqueues; i++)
		if (nd.queues[i].type > NT_NETDEV_QUEUE_TX || nd.queues[i].napi_id < -1)
			abort();
	for (size_t i = 0; i < nd.nnapis; i++)
		/* threaded is the kernel's word as sent (0, 1, 2 busy-poll, ...), a byte. */
		if (nd.napis[i].threaded < -1 || nd.napis[i].threaded > 255 || nd.napis[i].irq < -1 ||
		    nd.napis[i].gro_flush_timeout < -1)
			abort();
	nt_netdev_free(&nd);
	return 0;
}
