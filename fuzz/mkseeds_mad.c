/* Not built: how fuzz/corpus/mad was made (valid MADs from the encoders). From a build dir:
 *   gcc -std=c11 -I../smd -I../routing -I. ../fuzz/mkseeds_mad.c libsmdcore.a -o mkseeds && ./mkseeds
 * (writes into /work/wt-s2-fuzz/fuzz/corpus/mad: edit put() for another tree). */
#include <stdio.h>
#include <string.h>
#include "mad/codec.h"
static void put(const char *name, uint8_t sel, const void *b, size_t n)
{
	char p[256]; snprintf(p, sizeof p, "/work/wt-s2-fuzz/fuzz/corpus/mad/%s", name);
	FILE *f = fopen(p, "wb"); fputc(sel, f); fwrite(b, 1, n, f); fclose(f);
}
static void mad(const char *name, uint16_t attr, uint32_t mod, const uint8_t data[64], int dr, uint8_t method)
{
	struct sm_smp s, r; struct sm_dr_path path = {0}; uint8_t w[256];
	sm_dr_path_push(&path, 1); sm_dr_path_push(&path, 3);
	if (dr) sm_smp_init_dr(&s, SM_METHOD_GET, attr, mod, &path); else sm_smp_init_lid(&s, method, attr, mod);
	s.tid = 0x1234;
	memcpy(s.data, data, 64);
	if (dr) { sm_smp_make_response(&s, &r, 0); memcpy(r.data, data, 64); s = r; }
	if (sm_smp_encode(&s, w)) { fprintf(stderr, "encode %s\n", name); return; }
	put(name, 9 * 3, w, 256);  /* 27 % 9 == 0 */
}
int main(void)
{
	uint8_t d[64];
	struct sm_node_info ni = { 1, 1, SM_NODE_SWITCH, 36, 0x0002c90300001000ULL, 0x0002c90300001000ULL, 0x0002c90300001000ULL, 0xffff, 0xc738, 0xa0, 1, 0x2c9 };
	sm_node_info_encode(&ni, d); put("attr-nodeinfo", 1, d, 64); mad("mad-nodeinfo", SM_ATTR_NODE_INFO, 0, d, 1, 0);
	ni.node_type = SM_NODE_CA; ni.num_ports = 2; ni.port_guid++; sm_node_info_encode(&ni, d); put("attr-nodeinfo-ca", 1, d, 64);
	struct sm_node_desc nd; snprintf(nd.desc, sizeof nd.desc, "host00012 mlx5_0"); sm_node_desc_encode(&nd, d);
	put("attr-nodedesc", 2, d, 64); mad("mad-nodedesc", SM_ATTR_NODE_DESC, 0, d, 1, 0);
	struct sm_port_info pi; memset(&pi, 0, sizeof pi); pi.gid_prefix = 0xfe80000000000000ULL; pi.lid = 5; pi.master_sm_lid = 1;
	pi.local_port_num = 1; pi.link_width_supported = 3; pi.link_width_active = 2; pi.link_speed_supported = 7; pi.port_state = 4;
	pi.phys_state = 5; pi.lmc = 1; pi.link_speed_active = 4; pi.neighbor_mtu = 5; pi.vl_cap = 4; pi.mtu_cap = 5; pi.subnet_timeout = 18;
	pi.link_speed_ext_active = 2; pi.link_speed_ext_supported = 7;
	sm_port_info_encode(&pi, d); put("attr-portinfo", 3, d, 64); mad("mad-portinfo", SM_ATTR_PORT_INFO, 3, d, 1, 0);
	struct sm_switch_info si; memset(&si, 0, sizeof si); si.lft_cap = 0xc000; si.lft_top = 40; si.mft_cap = 1024; si.lifetime_value = 18; si.enhanced_port0 = 1; si.lids_per_port = 1;
	sm_switch_info_encode(&si, d); put("attr-switchinfo", 4, d, 64); mad("mad-switchinfo", SM_ATTR_SWITCH_INFO, 0, d, 1, 0);
	struct sm_lft_block b; for (int i = 0; i < 64; i++) b.port[i] = i % 5 ? (uint8_t)(i % 37) : 0xff;
	sm_lft_block_encode(&b, d); put("attr-lft", 5, d, 64); mad("mad-lft", SM_ATTR_LFT, 2, d, 1, 0);
	struct sm_sm_info sm = { 0x0002c90300001001ULL, 0, 7, 15, SM_SMSTATE_MASTER };
	sm_sm_info_encode(&sm, d); put("attr-sminfo", 6, d, 64); mad("mad-sminfo", SM_ATTR_SM_INFO, 0, d, 1, 0);
	struct sm_notice n; sm_notice_trap128(&n, 7); sm_notice_encode(&n, d); put("attr-trap128", 7, d, 64);
	mad("mad-trap128", SM_ATTR_NOTICE, 0, d, 0, SM_METHOD_TRAP);
	memset(&n, 0, sizeof n); n.is_generic = 1; n.type = 4; n.producer_type = 1; n.trap_num = 144; n.issuer_lid = 9; n.lid_addr = 9; n.new_cap_mask = 0x02510868; n.change_flags = SM_TRAP144_NODE_DESC;
	sm_notice_encode(&n, d); put("attr-trap144", 7, d, 64); mad("mad-trap144", SM_ATTR_NOTICE, 0, d, 0, SM_METHOD_TRAP);
	put("path", 8, "0,1,3,5,254", 11);
	put("path-short", 8, "1", 1);
	return 0;
}
