/* SPDX-License-Identifier: Apache-2.0 */
/* The irqbalance "setup" reply parser. */
#include "kernel/ctx.h"
#include "kernel/irqbalance_client.h"
#include "harness.h"

int main(void)
{
	char list[256];
	CHECK_INT(nt_irqbalance_parse_banned("SLEEP 10 BANNED 00000000", list, sizeof(list)), 0);
	CHECK_STR(list, "");
	CHECK_INT(nt_irqbalance_parse_banned("SLEEP 10 IRQ 185 LOAD 0 DIFF 0 CLASS 5 IRQ 177 LOAD 10 DIFF 2 CLASS 5 "
					     "IRQ 177 LOAD 0 DIFF 0 CLASS 5 BANNED 00000000,00000001",
					     list, sizeof(list)),
		  0);
	CHECK_STR(list, "177 185");
	CHECK_INT(nt_irqbalance_parse_banned("garbage", list, sizeof(list)), NT_EPARSE);
	CHECK_INT(nt_irqbalance_parse_banned("SLEEP 1 IRQ x", list, sizeof(list)), NT_EPARSE);
	char small[4];
	CHECK(nt_irqbalance_parse_banned("SLEEP 1 IRQ 12345 LOAD 0", small, sizeof(small)) < 0);
	TEST_MAIN_END();
}
