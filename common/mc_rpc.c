/* SPDX-License-Identifier: MIT */
/*
 * msgpack-RPC framing: the unpacker is fed whatever the socket delivered;
 * mc_rpc_next() returns whole messages, checks their shape strictly, and
 * refuses to buffer more than the limit for one message.  Before bytes
 * reach the unpacker, mc_rpc_scan() follows the msgpack headers so that
 * no container may declare more elements than the limit could hold, and
 * nesting stays within MC_RPC_MAX_DEPTH: a few hostile bytes cannot make
 * the daemon allocate gigabytes or recurse deeply.
 */
#include <string.h>

#include "mc_rpc.h"
#include "protocol.h"

int
mc_rpc_decoder_init(struct mc_rpc_decoder *d, size_t limit)
{
	/* Small to start: most messages are; the buffer grows to the limit. */
	if (!msgpack_unpacker_init(&d->unpacker, 4096))
		return -1;
	msgpack_unpacked_init(&d->result);
	d->limit = limit;
	memset(&d->scan, 0, sizeof d->scan);
	d->error = NULL;
	return 0;
}

void
mc_rpc_decoder_free(struct mc_rpc_decoder *d)
{
	msgpack_unpacked_destroy(&d->result);
	msgpack_unpacker_destroy(&d->unpacker);
}

/* How many bytes follow a type byte before its payload or elements. */
static uint8_t
mc_rpc_header_size(uint8_t t)
{
	static const uint8_t c0[32] = {
		/* c0 nil, c1 unused, c2 c3 bool, c4-c6 bin, c7-c9 ext */
		0, 0, 0, 0, 1, 2, 4, 2, 3, 5,
		/* ca cb float, cc-cf uint, d0-d3 int: payload only */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		/* d4-d8 fixext: the ext type byte, d9-db str, dc dd array */
		1, 1, 1, 1, 1, 1, 2, 4, 2, 4,
		/* de df map */
		2, 4 };

	return t >= 0xc0 && t <= 0xdf ? c0[t - 0xc0] : 0;
}

/* A big-endian length or count of n bytes. */
static uint64_t
mc_rpc_be(const uint8_t *p, int n)
{
	uint64_t	v = 0;

	while (n-- > 0)
		v = v << 8 | *p++;
	return v;
}

/*
 * The header in s->hdr is whole: its payload bytes (*skip) or its number
 * of elements (*items, -1 for a scalar).  NULL, or why it is refused.
 */
static const char *
mc_rpc_header(const struct mc_rpc_scan *s, uint64_t *skip, int64_t *items)
{
	static const uint8_t scalar[] = { 4, 8, 1, 2, 4, 8, 1, 2, 4, 8 };
	static const uint8_t fixext[] = { 1, 2, 4, 8, 16 };
	uint8_t			t = s->hdr[0];

	*skip = 0;
	*items = -1;
	if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
		return NULL;
	if (t <= 0x8f)
		*items = 2 * (t & 0x0f);
	else if (t <= 0x9f)
		*items = t & 0x0f;
	else if (t <= 0xbf)
		*skip = t & 0x1f;
	else if (t == 0xc1)
		return "not msgpack";
	else if (t <= 0xc6 || (t >= 0xd9 && t <= 0xdb))	/* bin, str */
		*skip = mc_rpc_be(s->hdr + 1, s->hdr_want - 1);
	else if (t <= 0xc9)				/* ext: len, type */
		*skip = mc_rpc_be(s->hdr + 1, s->hdr_want - 2);
	else if (t <= 0xd3)
		*skip = scalar[t - 0xca];
	else if (t <= 0xd8)
		*skip = fixext[t - 0xd4];
	else if (t <= 0xdd)
		*items = (int64_t)mc_rpc_be(s->hdr + 1, s->hdr_want - 1);
	else
		*items = 2 * (int64_t)mc_rpc_be(s->hdr + 1, s->hdr_want - 1);
	return NULL;
}

/* One element is complete: close the containers it completes. */
static void
mc_rpc_element_done(struct mc_rpc_scan *s)
{
	for (;;) {
		if (s->depth == 0) {
			s->used = 0;	/* a whole message */
			return;
		}
		s->left[s->depth - 1]--;
		s->due--;
		if (s->left[s->depth - 1] > 0)
			return;
		s->depth--;
	}
}

/* Follow len more bytes of the stream; NULL, or why they are refused. */
const char *
mc_rpc_scan(struct mc_rpc_scan *s, const uint8_t *p, size_t len, size_t limit)
{
	const char	*why;
	uint64_t	 skip, n, room, others;
	int64_t		 items;

	while (len > 0) {
		if (s->skip > 0) {
			n = s->skip < len ? s->skip : len;
			s->skip -= n;
			s->used += n;
			p += n;
			len -= n;
			if (s->used > limit)
				return "message over the size limit";
			if (s->skip == 0)
				mc_rpc_element_done(s);
			continue;
		}
		if (s->hdr_len == 0)
			s->hdr_want = 1 + mc_rpc_header_size(*p);
		s->hdr[s->hdr_len++] = *p++;
		len--;
		if (++s->used > limit)
			return "message over the size limit";
		if (s->hdr_len < s->hdr_want)
			continue;
		s->hdr_len = 0;
		if ((why = mc_rpc_header(s, &skip, &items)) != NULL)
			return why;
		/* Still to come: this payload, and a byte at least for each
		 * element due besides this one. */
		room = limit - s->used;
		others = s->due > 0 ? s->due - 1 : 0;
		if (skip + others > room)
			return "message over the size limit";
		if (items > 0) {
			if (s->depth == MC_RPC_MAX_DEPTH)
				return "msgpack nested too deep";
			if ((uint64_t)items + others > room)
				return "a container larger than the size limit";
			s->left[s->depth++] = (uint64_t)items;
			s->due += (uint64_t)items;
		} else if (skip > 0)
			s->skip = skip;
		else
			mc_rpc_element_done(s);
	}
	return NULL;
}

/*
 * Copy bytes in; -1 (d->error says why) when they would push one message
 * past the limit or declare more than it could hold.
 */
int
mc_rpc_feed(struct mc_rpc_decoder *d, const char *buf, size_t len)
{
	if (msgpack_unpacker_message_size(&d->unpacker) + len > d->limit) {
		d->error = "message over the size limit";
		return -1;
	}
	if ((d->error = mc_rpc_scan(&d->scan, (const uint8_t *)buf, len,
	    d->limit)) != NULL)
		return -1;
	if (msgpack_unpacker_buffer_capacity(&d->unpacker) < len &&
	    !msgpack_unpacker_reserve_buffer(&d->unpacker, len))
		return -1;
	memcpy(msgpack_unpacker_buffer(&d->unpacker), buf, len);
	msgpack_unpacker_buffer_consumed(&d->unpacker, len);
	return 0;
}

bool
mc_rpc_str(const msgpack_object *o, char *buf, size_t len)
{
	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size >= len)
		return false;
	/* An empty string has no storage: ptr may be NULL. */
	if (o->via.str.size > 0)
		memcpy(buf, o->via.str.ptr, o->via.str.size);
	buf[o->via.str.size] = '\0';
	return true;
}

const msgpack_object *
mc_rpc_map_get(const msgpack_object *map, const char *key)
{
	size_t		 klen = strlen(key);
	uint32_t	 i;

	if (map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

static bool
mc_rpc_msgid(const msgpack_object *o, uint32_t *msgid)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    o->via.u64 > UINT32_MAX)
		return false;
	*msgid = (uint32_t)o->via.u64;
	return true;
}

/* Check the shape of one message and fill *m. */
static enum mc_rpc_status
mc_rpc_shape(const msgpack_object *o, struct mc_rpc_message *m,
    const char **why)
{
	const msgpack_object	*e;

	memset(m, 0, sizeof *m);
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 3 ||
	    o->via.array.size > 4) {
		*why = "a message must be an array of 3 or 4 elements";
		return MC_RPC_MALFORMED;
	}
	e = o->via.array.ptr;
	if (e[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[0].via.u64 > 2) {
		*why = "message type must be 0, 1 or 2";
		return MC_RPC_MALFORMED;
	}
	m->type = (int)e[0].via.u64;
	switch (m->type) {
	case MC_MSG_REQUEST:
		if (o->via.array.size != 4 || !mc_rpc_msgid(&e[1], &m->msgid) ||
		    !mc_rpc_str(&e[2], m->method, sizeof m->method) ||
		    e[3].type != MSGPACK_OBJECT_ARRAY) {
			*why = "a request is [0, msgid (uint32), method (string "
			    "of at most 64 bytes), params (array)]";
			return MC_RPC_MALFORMED;
		}
		m->params = e[3];
		break;
	case MC_MSG_RESPONSE:
		if (o->via.array.size != 4 || !mc_rpc_msgid(&e[1], &m->msgid)) {
			*why = "a response is [1, msgid, error, result]";
			return MC_RPC_MALFORMED;
		}
		m->error = e[2];
		m->result = e[3];
		break;
	default:
		if (o->via.array.size != 3 ||
		    !mc_rpc_str(&e[1], m->method, sizeof m->method) ||
		    e[2].type != MSGPACK_OBJECT_ARRAY) {
			*why = "a notification is [2, method, params (array)]";
			return MC_RPC_MALFORMED;
		}
		m->params = e[2];
		break;
	}
	return MC_RPC_OK;
}

/* Has part of a message arrived, and not the rest? */
bool
mc_rpc_partial(const struct mc_rpc_decoder *d)
{
	return d->scan.used > 0;
}

/* The next whole message, if the buffered bytes hold one. */
enum mc_rpc_status
mc_rpc_next(struct mc_rpc_decoder *d, struct mc_rpc_message *m,
    const char **why)
{
	switch (msgpack_unpacker_next(&d->unpacker, &d->result)) {
	case MSGPACK_UNPACK_SUCCESS:
		return mc_rpc_shape(&d->result.data, m, why);
	case MSGPACK_UNPACK_CONTINUE:
		if (msgpack_unpacker_message_size(&d->unpacker) > d->limit) {
			*why = "message over the size limit";
			return MC_RPC_TOOBIG;
		}
		return MC_RPC_MORE;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		*why = "out of memory (or nesting too deep)";
		return MC_RPC_NOMEM;
	default:
		*why = "not msgpack";
		return MC_RPC_MALFORMED;
	}
}

void
mc_rpc_pack_str(msgpack_packer *pk, const char *s)
{
	size_t	len = strlen(s);

	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

/* The caller packs nparams values after this. */
void
mc_rpc_pack_request(msgpack_packer *pk, uint32_t msgid, const char *method,
    uint32_t nparams)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint8(pk, MC_MSG_REQUEST);
	msgpack_pack_uint32(pk, msgid);
	mc_rpc_pack_str(pk, method);
	msgpack_pack_array(pk, nparams);
}

/* The caller packs the result after this. */
void
mc_rpc_pack_response_ok(msgpack_packer *pk, uint32_t msgid)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint8(pk, MC_MSG_RESPONSE);
	msgpack_pack_uint32(pk, msgid);
	msgpack_pack_nil(pk);
}

void
mc_rpc_pack_response_error(msgpack_packer *pk, uint32_t msgid,
    const char *code, const char *message)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint8(pk, MC_MSG_RESPONSE);
	msgpack_pack_uint32(pk, msgid);
	msgpack_pack_map(pk, 2);
	mc_rpc_pack_str(pk, "code");
	mc_rpc_pack_str(pk, code);
	mc_rpc_pack_str(pk, "message");
	mc_rpc_pack_str(pk, message);
	msgpack_pack_nil(pk);
}

void
mc_rpc_pack_notify(msgpack_packer *pk, const char *method, uint32_t nparams)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint8(pk, MC_MSG_NOTIFY);
	mc_rpc_pack_str(pk, method);
	msgpack_pack_array(pk, nparams);
}
