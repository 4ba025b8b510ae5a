/* SPDX-License-Identifier: MIT */
/*
 * DOC: topology dump readers, the grammar
 *
 * One line at a time (rd_parse_line()): attribute lines (GUIDs, vendid,
 * devid, sysimgguid, ibsim's width/speed defaults) pend for the next node
 * header; a node header adds the node to the scratch fabric at once (so
 * duplicate GUIDs and LIDs are caught on their own line); a port line
 * becomes a record naming its peer by id, resolved at EOF (topo_read.c).
 * How the two formats differ (r->mode) is in the DOC of topo_read.c.
 */
#include "config.h"
#include "model/topo_read_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

/* ---- attribute lines ---- */

static int pend(struct rd *r, unsigned bit, const char *what)
{
	if (r->mode == MODE_IBND && (r->pend & bit))
		return rd_fail(r, r->line, -EINVAL,
			    "second %s before a node header: the block started at line %u is truncated",
			    what, r->pend_line);
	if (!r->pend)
		r->pend_line = r->line;
	r->pend |= bit;
	return 0;
}

/* After the value of an attribute line only a comment may follow. */
static int attr_end(struct rd *r, const char *s, const char *kw)
{
	s = skip_ws(s);
	if (*s && *s != '#')
		return rd_fail(r, r->line, -EINVAL, "unexpected text after %s value: '%.40s'", kw, s);
	return 0;
}

static int parse_attr(struct rd *r, const char *kw, size_t kwl, const char *s)
{
	uint64_t v;
	int rc, type = 0;

#define KW(x) (kwl == sizeof(x) - 1 && !memcmp(kw, x, kwl))
	if (KW("switchguid"))
		type = SM_NODE_SWITCH;
	else if (KW("caguid") || KW("hcaguids"))
		type = SM_NODE_CA;
	else if (KW("rtguid"))
		type = SM_NODE_ROUTER;

	if (type) {
		bool rel = false;
		if (*s == '+' && r->mode == MODE_IBSIM)
			rel = true;
		else if (*s != '=')
			return rd_fail(r, r->line, -EINVAL, "expected '=' after %.*s", (int)kwl, kw);
		s++;
		if ((rc = get_guid(&s, &v)))
			return rd_guid_fail(r, rc, "GUID");
		/* ibsim keeps an absolute base per type; "+N" is relative to it */
		if (!rel)
			r->abs_base[type] = v;
		r->guid_base[type] = r->abs_base[type] + (rel ? v : 0);
		r->guid_given[type] = true;
		r->port0_guid = 0;
		if (type == SM_NODE_SWITCH && *s == '(') {
			s++;
			if ((rc = get_guid(&s, &r->port0_guid)))
				return rd_guid_fail(r, rc, "port 0 GUID");
			if (*s++ != ')')
				return rd_fail(r, r->line, -EINVAL, "expected ')' after port 0 GUID");
		}
		if ((rc = pend(r, PEND_GUID, "GUID line")))
			return rc;
		return attr_end(r, s, "GUID");
	}
	if (*s != '=')
		return rd_fail(r, r->line, -EINVAL, "expected '=' after %.*s", (int)kwl, kw);
	s++;
	if (KW("sysimgguid")) {
		if ((rc = get_guid(&s, &r->sysimg)))
			return rd_guid_fail(r, rc, "system image GUID");
		if ((rc = pend(r, PEND_SYSIMG, "sysimgguid=")))
			return rc;
		return attr_end(r, s, "sysimgguid");
	}
	if (KW("vendid") || KW("devid")) {
		bool ven = KW("vendid");
		uint64_t lim = ven ? 0xffffff : 0xffff;
		if ((rc = get_uint(&s, true, lim, &v)))
			return rd_num_fail(r, rc, ven ? "vendor id" : "device id", lim);
		if (ven)
			r->vendid = (uint32_t)v;
		else
			r->devid = (uint16_t)v;
		if ((rc = pend(r, ven ? PEND_VENDID : PEND_DEVID, ven ? "vendid=" : "devid=")))
			return rc;
		return attr_end(r, s, ven ? "vendid" : "devid");
	}
	/* ibsim-only defaults for the enabled link rates */
	uint64_t max = KW("width") ? 31 : KW("speed") ? 7 : 15;
	if (KW("width") || KW("speed") || KW("extspeed")) {
		if (r->mode == MODE_IBND)
			return rd_fail(r, r->line, -EINVAL,
				    "'%.*s=' is an ibsim net-file keyword, not ibnetdiscover output",
				    (int)kwl, kw);
		if ((rc = get_uint(&s, true, max, &v)))
			return rd_num_fail(r, rc, "value", max);
		if (!KW("extspeed") && v == 0)
			return rd_fail(r, r->line, -EINVAL, "%.*s=0 enables nothing", (int)kwl, kw);
		if (KW("width"))
			r->netwidth = (uint8_t)v;
		else if (KW("speed"))
			r->netspeed = (uint8_t)v;
		else
			r->netspeedext = (uint8_t)v;
		return attr_end(r, s, "rate");
	}
#undef KW
	return rd_fail(r, r->line, -EINVAL, "unknown keyword '%.*s'", (int)kwl, kw);
}

/* ---- node headers ---- */

/* Description in a header comment; *sp is just after '#'. */
static void header_desc(struct rd *r, const char **sp, char *desc)
{
	const char *s = skip_ws(*sp), *e;
	size_t len;

	if (*s == '"') {
		/* The closing quote is the last one on the line: descriptions may hold quotes. */
		e = strrchr(s + 1, '"');
		if (!e) {
			e = s + strlen(s);
			*sp = e;
		} else {
			*sp = e + 1;
		}
		s++;
	} else {
		/* ibsim accepts an unquoted description ending at these words */
		static const char *const ends[] = { " enhanced port ", " base port ", " lid ", " lmc " };
		e = s + strlen(s);
		for (size_t i = 0; i < 4; i++) {
			const char *x = strstr(s, ends[i]);
			if (x && x < e)
				e = x;
		}
		*sp = e;
	}
	len = (size_t)(e - s);
	if (len > SM_DESC_MAX)
		len = SM_DESC_MAX; /* node-name-map names can be longer than NodeDescription */
	memcpy(desc, s, len);
	desc[len] = '\0';
	(void)r;
}

/* "lid N" at *sp (after optional blanks); 0, 1 absent, < 0 error. */
static int get_lid_word(struct rd *r, const char **sp, const char *word, uint64_t max, uint64_t *v)
{
	const char *s = skip_ws(*sp);
	size_t wl = 0;
	int rc;

	/* word has no NUL before its end, so a short line stops the compare */
	while (word[wl] && s[wl] == word[wl])
		wl++;
	if (word[wl] || (s[wl] != ' ' && s[wl] != '\t'))
		return 1;
	s = skip_ws(s + wl);
	if ((rc = get_uint(&s, false, max, v)))
		return rd_num_fail(r, rc, word, max);
	*sp = s;
	return 0;
}

static int set_lid(struct rd *r, uint32_t n, unsigned p, uint64_t lid, uint64_t lmc)
{
	int rc = sm_fabric_set_lid(r->fab, n, p, (uint16_t)lid, (uint8_t)lmc);

	if (rc == -EEXIST) {
		uint32_t o = SM_NONE;
		for (uint64_t l = lid; o == SM_NONE && l < lid + (1u << lmc); l++)
			o = sm_fabric_find_lid(r->fab, r->plane, (uint16_t)l);
		o = r->fab->ports[o].node;
		return rd_fail(r, r->line, -EEXIST, "LID %llu (LMC %llu) overlaps the LIDs of \"%s\" (line %u)",
			    (unsigned long long)lid, (unsigned long long)lmc, node_name(r, o), r->nodes[o].line);
	}
	if (rc)
		return rd_fail(r, r->line, -EINVAL, "LID %llu with LMC %llu is out of range",
			    (unsigned long long)lid, (unsigned long long)lmc);
	return 0;
}

static int parse_header(struct rd *r, int type, const char *s)
{
	uint64_t v, guid;
	size_t nlen;
	int rc;
	char desc[SM_DESC_MAX + 1] = "";
	uint64_t lid = 0, lmc = 0;
	bool has_lid = false, esp0 = false;
	unsigned hline = r->line;

	s = skip_ws(s);
	if ((rc = get_uint(&s, false, SM_MAX_PORTS, &v)))
		return rd_num_fail(r, rc, "number of ports", SM_MAX_PORTS);
	if (v < 1)
		return rd_fail(r, r->line, -EINVAL, "a node needs at least one port");
	unsigned nports = (unsigned)v;
	s = skip_ws(s);
	const char *name = get_quoted(&s, &nlen);
	if (!name)
		return rd_fail(r, r->line, -EINVAL, "expected a quoted node id after the port count");
	if (!nlen)
		return rd_fail(r, r->line, -EINVAL, "empty node id");
	s = skip_ws(s);
	if (*s == '#') {
		s++;
		header_desc(r, &s, desc);
		if (type == SM_NODE_SWITCH) {
			const char *t = skip_ws(s);
			if (!strncmp(t, "enhanced port 0", 15)) {
				esp0 = true;
				s = t + 15;
			} else if (!strncmp(t, "base port 0", 11)) {
				s = t + 11;
			}
			if ((rc = get_lid_word(r, &s, "lid", SM_UNICAST_LID_MAX, &lid)) < 0)
				return rc;
			has_lid = rc == 0;
			if (has_lid && (rc = get_lid_word(r, &s, "lmc", 7, &lmc)) < 0)
				return rc;
			if (has_lid && rc == 1 && r->mode == MODE_IBND)
				return rd_fail(r, r->line, -EINVAL, "switch header has 'lid' but no 'lmc'");
		}
	} else if (*s) {
		return rd_fail(r, r->line, -EINVAL, "unexpected text after node id: '%.40s'", s);
	}
	if (r->mode == MODE_IBND) {
		if (!r->guid_given[type] || !(r->pend & PEND_GUID))
			return rd_fail(r, r->line, -EINVAL,
				    "%s header without its %s= line (truncated block, or an ibsim net file: use format ibsim)",
				    sm_node_type_str(type),
				    type == SM_NODE_SWITCH ? "switchguid" : type == SM_NODE_CA ? "caguid" : "rtguid");
		if (type == SM_NODE_SWITCH && !has_lid)
			return rd_fail(r, r->line, -EINVAL,
				    "switch header lacks '# \"desc\" ... port 0 lid N lmc M'");
	}
	guid = r->guid_base[type];
	if (!guid)
		return rd_fail(r, r->line, -EINVAL, "%s \"%.*s\" has GUID 0 (give it a %s= line)",
			    sm_node_type_str(type), (int)nlen, name,
			    type == SM_NODE_SWITCH ? "switchguid" : type == SM_NODE_CA ? "caguid" : "rtguid");
	uint32_t dup = rd_name_find(r, name, nlen);
	if (dup != SM_NONE)
		return rd_fail(r, r->line, -EEXIST, "node id \"%.*s\" already defined at line %u",
			    (int)nlen, name, r->nodes[dup].line);

	uint64_t port0 = (r->mode == MODE_IBND && type == SM_NODE_SWITCH) ? r->port0_guid : 0;
	int64_t n = sm_fabric_add_node(r->fab, (enum sm_node_type)type, guid, nports, r->plane, port0);
	if (n == -EEXIST) {
		uint32_t o = sm_fabric_find_node(r->fab, guid);
		if (o == SM_NONE) {
			uint32_t pi = sm_fabric_find_port(r->fab, port0 ? port0 : guid);
			o = pi == SM_NONE ? SM_NONE : r->fab->ports[pi].node;
		}
		return rd_fail(r, r->line, -EEXIST, "duplicate GUID 0x%016llx (node \"%s\" at line %u)",
			    (unsigned long long)(port0 && sm_fabric_find_node(r->fab, guid) == SM_NONE ? port0 : guid),
			    o == SM_NONE ? "?" : node_name(r, o), o == SM_NONE ? 0 : r->nodes[o].line);
	}
	if (n < 0)
		return rd_fail(r, r->line, (int)n, "cannot add node: %s", strerror((int)-n));
	if ((rc = rd_grow((void **)&r->nodes, &r->cap_nodes, (uint32_t)n + 1, sizeof(*r->nodes))) ||
	    (rc = rd_grow((void **)&r->portmap, &r->cap_portmap, r->fab->n_ports, sizeof(*r->portmap))))
		return rd_fail(r, r->line, rc, "out of memory");
	struct rd_node *rn = &r->nodes[n];
	*rn = (struct rd_node){ .line = hline, .first_port = r->n_ports, .wena = r->netwidth,
				.sena = r->netspeed, .eena = r->netspeedext };
	if ((rc = rd_arena_add(r, name, nlen, &rn->name)) || (rc = rd_name_insert(r, (uint32_t)n)))
		return rd_fail(r, r->line, rc, "out of memory");
	for (uint32_t i = 0; i <= nports; i++)
		r->portmap[sm_port_index(r->fab, (uint32_t)n, i)] = SM_NONE;

	struct sm_node *nd = sm_node(r->fab, (uint32_t)n);
	nd->vendor_id = (r->pend & PEND_VENDID) ? r->vendid : 0;
	nd->device_id = (r->pend & PEND_DEVID) || r->mode == MODE_IBSIM ? r->devid : 0;
	nd->sysimg_guid = (r->pend & PEND_SYSIMG) ? r->sysimg : r->mode == MODE_IBSIM ? guid : 0;
	if (esp0)
		nd->flags |= SM_NODE_F_ENHANCED_SP0;
	if (type == SM_NODE_SWITCH) {
		/* port 0 is the switch's management port: always up (ibsim does the same) */
		sm_port(r->fab, (uint32_t)n, 0)->state = SM_PORT_ACTIVE;
		sm_port(r->fab, (uint32_t)n, 0)->phys_state = 5;
	}
	/* what sm_fabric_set_desc() does, without a printf per node */
	const char *dsrc = desc[0] || r->mode == MODE_IBND ? desc : r->arena + rn->name;
	size_t dl = strnlen(dsrc, SM_DESC_MAX);
	memcpy(nd->desc, dsrc, dl);
	nd->desc[dl] = '\0';
	if (has_lid && lid && (rc = set_lid(r, (uint32_t)n, 0, lid, lmc)))
		return rc;
	if (r->mode == MODE_IBSIM && type != SM_NODE_SWITCH) {
		for (unsigned p = 1; p <= nports; p++) {
			rc = sm_fabric_set_port_guid(r->fab, (uint32_t)n, p, guid + p);
			if (rc == -EEXIST)
				return rd_fail(r, r->line, -EEXIST,
					    "port GUID 0x%016llx (node GUID + port %u) is already used",
					    (unsigned long long)(guid + p), p);
			if (rc)
				return rd_fail(r, r->line, rc, "cannot set port GUID");
		}
	}
	/* ibsim's GUID allocation: the next node of this type continues from here */
	r->guid_base[type] = guid + (type == SM_NODE_SWITCH ? 1 : nports + 1u);
	r->guid_given[type] = false;
	r->pend = 0;
	r->vendid = 0;
	r->sysimg = 0;
	r->port0_guid = 0;
	if (r->mode == MODE_IBND)
		r->devid = 0;
	r->cur = n;
	return 0;
}

/* ---- port lines ---- */

/* ibsim: a "4xQDR" text sets enabled masks (sim_net.c semantics). */
static void ibsim_text_rate(struct rd_port *p, uint8_t width, uint8_t speed, uint8_t flags)
{
	switch (width) {
	case 8: p->wena = 11; break;   /* 12x -> 1x|4x|12x */
	case 4: p->wena = 4; break;    /* 8x */
	case 2: p->wena = 3; break;    /* 4x -> 1x|4x */
	case 1: p->wena = 1; break;
	case 16: p->wena = 16; break;
	default: break;
	}
	if (flags & SM_PORT_F_EXT_SPEED) {
		p->sena = 7;
		p->mena = 1;
		p->eena = (uint8_t)((speed << 1) - 1); /* FDR 1, EDR 3, HDR 7, NDR 15 */
	} else if (flags & SM_PORT_F_FDR10) {
		p->sena = 7;
		p->mena = 1;
	} else if (speed == 1) {
		p->sena = 1;
	} else if (speed == 2) {
		p->sena = 3;
	} else if (speed == 4) {
		p->sena = 7;
	}
}

/* The part after '#' of a port line. */
static int port_comment(struct rd *r, struct rd_port *p, int type, const char *c)
{
	uint64_t lid = 0, lmc = 0;
	bool has_lid = false;
	int rc;

	c = skip_ws(c);
	if (type != SM_NODE_SWITCH) {
		if ((rc = get_lid_word(r, &c, "lid", SM_UNICAST_LID_MAX, &lid)) < 0)
			return rc;
		if (rc == 0) {
			has_lid = true;
			if ((rc = get_lid_word(r, &c, "lmc", 7, &lmc)) < 0)
				return rc;
			if (rc == 1) {
				/* "# lid N 4xQDR": ibsim takes N as this port's LID */
				if (r->mode == MODE_IBND)
					return rd_fail(r, r->line, -EINVAL, "CA port line has 'lid' but no 'lmc'");
				c = skip_ws(c);
				goto rate;
			}
		} else if (r->mode == MODE_IBND) {
			return rd_fail(r, r->line, -EINVAL,
				    "CA port line lacks '# lid N lmc M' (truncated line?)");
		}
	}
	/* the peer's description, then " lid N RATE ..." after its last quote */
	const char *q = strrchr(c, '"');
	const char *t = q ? q + 1 : c;
	uint64_t plid;
	if ((rc = get_lid_word(r, &t, "lid", SM_UNICAST_LID_MAX, &plid)) < 0)
		return rc;
	if (rc == 1) {
		if (r->mode == MODE_IBND)
			return rd_fail(r, r->line, -EINVAL,
				    "port line lacks the '\"peer desc\" lid N WIDTHxSPEED' comment (truncated line?)");
		goto lids; /* ibsim ignores it with a warning */
	}
	c = skip_ws(t);
rate:
	if (*c) {
		const char *e = c;
		uint8_t w, sp, fl;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if (sm_topo_parse_rate(c, (size_t)(e - c), &w, &sp, &fl)) {
			if (r->mode == MODE_IBND)
				return rd_fail(r, r->line, -EINVAL, "unknown link rate '%.*s'",
					    (int)(e - c), c);
		} else if (r->mode == MODE_IBND) {
			p->width = w;
			p->speed = sp;
			p->flags = fl;
		} else {
			ibsim_text_rate(p, w, sp, fl);
		}
	} else if (r->mode == MODE_IBND) {
		return rd_fail(r, r->line, -EINVAL, "port line lacks the link rate (e.g. 4xHDR)");
	}
lids:
	if (has_lid && lid && (rc = set_lid(r, p->node, p->num, lid, lmc)))
		return rc;
	return 0;
}

/* Optional "[ext N]" after a port number (ibnetdiscover -g). */
static int skip_ext(struct rd *r, const char **sp)
{
	const char *s = *sp;
	uint64_t v;

	if (s[0] != '[' || strncmp(s, "[ext ", 5))
		return 0;
	s += 5;
	if (get_uint(&s, false, 255, &v) || *s != ']')
		return rd_fail(r, r->line, -EINVAL, "bad '[ext N]' port mapping");
	*sp = s + 1;
	return 0;
}

static int parse_port(struct rd *r, const char *s)
{
	uint32_t n = (uint32_t)r->cur;
	const struct sm_node *nd = sm_node(r->fab, n);
	struct rd_port *p;
	uint64_t v, guid = 0;
	size_t plen;
	int rc;

	if ((rc = rd_grow((void **)&r->ports, &r->cap_ports, r->n_ports + 1, sizeof(*r->ports))))
		return rd_fail(r, r->line, rc, "out of memory");
	p = &r->ports[r->n_ports];
	memset(p, 0, sizeof(*p));
	p->node = n;
	p->line = r->line;
	p->peer_node = SM_NONE;
	p->wena = r->nodes[n].wena;
	p->sena = r->nodes[n].sena;
	p->eena = r->nodes[n].eena;

	s++; /* '[' */
	if ((rc = get_uint(&s, false, 1000000, &v)) == -1)
		return rd_fail(r, r->line, -EINVAL, "expected a port number after '['");
	if (rc == -2 || v < 1 || v > nd->nports)
		return rd_fail(r, r->line, -EINVAL, "port %s%llu out of range 1..%u of \"%s\"",
			    rc == -2 ? ">" : "", rc == -2 ? 1000000ULL : (unsigned long long)v,
			    nd->nports, node_name(r, n));
	if (*s++ != ']')
		return rd_fail(r, r->line, -EINVAL, "expected ']' after the port number");
	p->num = (uint8_t)v;
	uint32_t pi = sm_port_index(r->fab, n, p->num);
	if (r->portmap[pi] != SM_NONE)
		return rd_fail(r, r->line, -EINVAL, "port %u of \"%s\" listed twice (first at line %u)",
			    p->num, node_name(r, n), r->ports[r->portmap[pi]].line);
	if ((rc = skip_ext(r, &s)))
		return rc;
	if (*s == '(') {
		s++;
		if ((rc = get_guid(&s, &guid)))
			return rd_guid_fail(r, rc, "port GUID");
		if (*s++ != ')')
			return rd_fail(r, r->line, -EINVAL, "expected ')' after the port GUID");
	}
	s = skip_ws(s);
	if (*s == '@')
		return rd_fail(r, r->line, -EINVAL, "ibsim port aliases ('@') are not supported");
	const char *peer = get_quoted(&s, &plen);
	if (!peer)
		return rd_fail(r, r->line, -EINVAL, "expected the quoted id of the peer node");
	if (!plen)
		return rd_fail(r, r->line, -EINVAL, "empty peer node id");
	if (*s == '[') {
		s++;
		if ((rc = get_uint(&s, false, 1000000, &v)) == -1)
			return rd_fail(r, r->line, -EINVAL, "expected the peer port number after '['");
		if (rc == -2 || v < 1 || v > SM_MAX_PORTS)
			return rd_fail(r, r->line, -EINVAL, "peer port %llu out of range 1..%u",
				    rc == -2 ? 1000000ULL : (unsigned long long)v, SM_MAX_PORTS);
		if (*s++ != ']')
			return rd_fail(r, r->line, -EINVAL, "expected ']' after the peer port number");
		p->peer_port = (uint8_t)v;
	} else if (r->mode == MODE_IBND) {
		return rd_fail(r, r->line, -EINVAL, "expected '[port]' after the peer id");
	} else {
		p->peer_port = 1; /* ibsim's default */
	}
	if ((rc = skip_ext(r, &s)))
		return rc;
	s = skip_ws(s);
	if (*s == '(') {
		s++;
		if ((rc = get_guid(&s, &p->peer_guid)))
			return rd_guid_fail(r, rc, "peer port GUID");
		if (*s++ != ')')
			return rd_fail(r, r->line, -EINVAL, "expected ')' after the peer port GUID");
	}
	/* ibsim port options w=N s=N e=N, then the comment */
	for (;;) {
		s = skip_ws(s);
		if (!*s || *s == '#')
			break;
		char o = *s;
		if (r->mode == MODE_IBND || (o != 'w' && o != 's' && o != 'e') || s[1] != '=')
			return rd_fail(r, r->line, -EINVAL, "unexpected text in port line: '%.40s'", s);
		s += 2;
		uint64_t max = o == 'w' ? 31 : o == 's' ? 7 : 15;
		if ((rc = get_uint(&s, true, max, &v)))
			return rd_num_fail(r, rc, o == 'w' ? "w= width" : o == 's' ? "s= speed" : "e= speed", max);
		if (o == 'w') {
			if (!v)
				return rd_fail(r, r->line, -EINVAL, "w=0 enables no width");
			p->wena = (uint8_t)v;
		} else if (o == 's') {
			p->sena = (uint8_t)(v ? v : 4); /* ibsim: 0 means QDR */
		} else {
			p->eena = (uint8_t)v;
		}
	}
	if (*s == '#') {
		/* ibsim reads neither LID nor rate from a router's port lines */
		if (!(r->mode == MODE_IBSIM && nd->type == SM_NODE_ROUTER) &&
		    (rc = port_comment(r, p, nd->type, s + 1)))
			return rc;
	} else if (r->mode == MODE_IBND) {
		return rd_fail(r, r->line, -EINVAL,
			    "port line lacks its '# ... lid N WIDTHxSPEED' comment (truncated line?)");
	}
	if (r->mode == MODE_IBND && guid && nd->type != SM_NODE_SWITCH) {
		rc = sm_fabric_set_port_guid(r->fab, n, p->num, guid);
		if (rc == -EEXIST) {
			uint32_t o = r->fab->ports[sm_fabric_find_port(r->fab, guid)].node;
			return rd_fail(r, r->line, -EEXIST, "duplicate port GUID 0x%016llx (node \"%s\" at line %u)",
				    (unsigned long long)guid, node_name(r, o), r->nodes[o].line);
		}
		if (rc)
			return rd_fail(r, r->line, -EINVAL, "cannot set port GUID 0x%llx",
				    (unsigned long long)guid);
	}
	if ((rc = rd_arena_add(r, peer, plen, &p->peer_name)))
		return rd_fail(r, r->line, rc, "out of memory");
	r->portmap[pi] = r->n_ports;
	r->nodes[n].n_lines++;
	r->n_ports++;
	return 0;
}

/* ---- line dispatch ---- */

static int is_ports_report(const char *s)
{
	/* "CA     5  1 0x..." / "SW     1  3 0x..." (ibnetdiscover -p) */
	if ((strncmp(s, "CA ", 3) && strncmp(s, "SW ", 3) && strncmp(s, "RT ", 3)))
		return 0;
	s = skip_ws(s + 3);
	return isdigit((unsigned char)*s);
}

typedef unsigned char v16u8 __attribute__((vector_size(16)));

/*
 * Whether line holds a control byte other than tab, or DEL: 16 bytes at a
 * time (GCC vector extension: SSE2/NEON or plain code), as every byte of a
 * dump passes here; the caller finds which byte on the rare yes.
 */
static bool has_binary(const char *line, size_t len)
{
	v16u8 acc = { 0 };
	size_t i = 0;

	for (; i + 16 <= len; i += 16) {
		v16u8 v;
		memcpy(&v, line + i, 16);
		acc |= (v16u8)(((v < 0x20) & (v != 0x09)) | (v == 0x7f));
	}
	if (i < len) {
		v16u8 v;
		memset(&v, ' ', 16);  /* pad the tail with harmless blanks */
		memcpy(&v, line + i, len - i);
		acc |= (v16u8)(((v < 0x20) & (v != 0x09)) | (v == 0x7f));
	}
	uint64_t w[2];
	memcpy(w, &acc, 16);
	return (w[0] | w[1]) != 0;
}

int rd_parse_line(struct rd *r, char *line, size_t len)
{
	/* binary data: NUL or control bytes other than tab (and a final CR) */
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	for (size_t i = has_binary(line, len) ? 0 : len; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return rd_fail(r, r->line, -EINVAL,
				    "binary data (byte 0x%02x at column %zu): not a text dump", c, i + 1);
	}
	const char *s = skip_ws(line);
	if (!*s) {
		r->cur = -1;
		return 0;
	}
	if (*s == '#')
		return 0;
	if (*s == '[') {
		if (r->cur < 0)
			return rd_fail(r, r->line, -EINVAL, "port line outside a node block");
		return parse_port(r, s);
	}
	if (*s == '@')
		return rd_fail(r, r->line, -EINVAL, "ibsim port aliases ('@') are not supported");
	r->cur = -1;
	if (is_ports_report(s))
		return rd_fail(r, r->line, -EINVAL,
			    "this is an ibnetdiscover ports report (-p), not a topology dump");
	const char *kw = s;
	while (isalpha((unsigned char)*s) || *s == '_' || *s == '-')
		s++;
	size_t kwl = (size_t)(s - kw);
	if (!kwl)
		return rd_fail(r, r->line, -EINVAL, "unexpected '%.20s'", kw);
#define KW(x) (kwl == sizeof(x) - 1 && !memcmp(kw, x, kwl))
	if (KW("Switch"))
		return parse_header(r, SM_NODE_SWITCH, s);
	if (KW("Ca") || KW("Hca"))
		return parse_header(r, SM_NODE_CA, s);
	if (KW("Rt"))
		return parse_header(r, SM_NODE_ROUTER, s);
	/* ibnetdiscover -g grouping lines carry nothing the model holds */
	if (KW("Chassis") || KW("Non-Chassis") || (KW("Hostname") && *s == ':'))
		return 0;
	if (KW("pdebug"))
		return 0; /* ibsim parser debugging */
	if (KW("include") || KW("do") || KW("module"))
		return rd_fail(r, r->line, -ENOTSUP, "ibsim '%.*s' lines are not supported", (int)kwl, kw);
	if (*s == '=' || *s == '+')
		return parse_attr(r, kw, kwl, s);
#undef KW
	return rd_fail(r, r->line, -EINVAL, "unknown keyword '%.*s'", (int)kwl, kw);
}
