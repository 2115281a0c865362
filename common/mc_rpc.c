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
#include <stdio.h>
#include <string.h>

#include "mc_rpc.h"
#include "mc_util.h"
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
		*skip = mc_be(s->hdr + 1, s->hdr_want - 1);
	else if (t <= 0xc9)				/* ext: len, type */
		*skip = mc_be(s->hdr + 1, s->hdr_want - 2);
	else if (t <= 0xd3)
		*skip = scalar[t - 0xca];
	else if (t <= 0xd8)
		*skip = fixext[t - 0xd4];
	else if (t <= 0xdd)
		*items = (int64_t)mc_be(s->hdr + 1, s->hdr_want - 1);
	else
		*items = 2 * (int64_t)mc_be(s->hdr + 1, s->hdr_want - 1);
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
		if (s->hdr_len == 0) {
			s->hdr_want = 1 + mc_rpc_header_size(*p);
			/* This element has begun: no longer owed a byte. */
			if (s->due > 0)
				s->due--;
		}
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
		 * element not yet begun (its container's already are). */
		room = limit - s->used;
		others = s->due;
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

/*
 * A string: msgpack str, or bin as older packers (and pynvim) write
 * strings.  Refused when it does not fit or holds a NUL byte, which no
 * name or path of ours can.
 */
bool
mc_rpc_str(const msgpack_object *o, char *buf, size_t len)
{
	const char	*ptr;
	uint32_t	 size;

	if (o == NULL)
		return false;
	if (o->type == MSGPACK_OBJECT_STR) {
		ptr = o->via.str.ptr;
		size = o->via.str.size;
	} else if (o->type == MSGPACK_OBJECT_BIN) {
		ptr = o->via.bin.ptr;
		size = o->via.bin.size;
	} else
		return false;
	if (size >= len || (size > 0 && memchr(ptr, '\0', size) != NULL))
		return false;
	/* An empty string has no storage: ptr may be NULL. */
	if (size > 0)
		memcpy(buf, ptr, size);
	buf[size] = '\0';
	return true;
}

/* Is o a str or bin of exactly these bytes? */
static bool
mc_rpc_str_is(const msgpack_object *o, const char *s, size_t len)
{
	if (o->type == MSGPACK_OBJECT_STR)
		return o->via.str.size == len &&
		    (len == 0 || memcmp(o->via.str.ptr, s, len) == 0);
	if (o->type == MSGPACK_OBJECT_BIN)
		return o->via.bin.size == len &&
		    (len == 0 || memcmp(o->via.bin.ptr, s, len) == 0);
	return false;
}

const msgpack_object *
mc_rpc_map_get(const msgpack_object *map, const char *key)
{
	size_t		 klen = strlen(key);
	uint32_t	 i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < map->via.map.size; i++)
		if (mc_rpc_str_is(&map->via.map.ptr[i].key, key, klen))
			return &map->via.map.ptr[i].val;
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

/*
 * A request whose msgid is known: anything else wrong with it is answered
 * (MC_RPC_BADREQUEST), never a reason to drop the connection.
 */
static enum mc_rpc_status
mc_rpc_request(const msgpack_object *o, struct mc_rpc_message *m,
    const char **why)
{
	const msgpack_object	*e = o->via.array.ptr;

	if (o->via.array.size != 4) {
		*why = "a request is [0, msgid, method, params]: 4 elements";
		return MC_RPC_BADREQUEST;
	}
	if (!mc_rpc_str(&e[2], m->method, sizeof m->method)) {
		*why = "the method must be a string (str or bin) of at most "
		    "64 bytes";
		return MC_RPC_BADREQUEST;
	}
	if (e[3].type != MSGPACK_OBJECT_ARRAY) {
		*why = "params must be an array";
		return MC_RPC_BADREQUEST;
	}
	m->params = e[3];
	return MC_RPC_OK;
}

/*
 * Check the shape of one decoded object and fill *m.  What cannot be
 * answered (no msgid to answer to) and is not a well-formed response or
 * notification is MC_RPC_IGNORED: it was valid msgpack, so the stream is
 * still in step.
 */
static enum mc_rpc_status
mc_rpc_shape(const msgpack_object *o, struct mc_rpc_message *m,
    const char **why)
{
	const msgpack_object	*e;
	uint32_t		 n;

	memset(m, 0, sizeof *m);
	*why = "not a msgpack-RPC message: [type, ...] with type 0, 1 or 2";
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 2)
		return MC_RPC_IGNORED;
	e = o->via.array.ptr;
	n = o->via.array.size;
	if (e[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[0].via.u64 > 2)
		return MC_RPC_IGNORED;
	m->type = (int)e[0].via.u64;
	switch (m->type) {
	case MC_MSG_REQUEST:
		if (!mc_rpc_msgid(&e[1], &m->msgid)) {
			*why = "a request's msgid must be an integer from 0 to "
			    "2^32-1";
			return MC_RPC_IGNORED;
		}
		return mc_rpc_request(o, m, why);
	case MC_MSG_RESPONSE:
		if (n != 4 || !mc_rpc_msgid(&e[1], &m->msgid)) {
			*why = "a response is [1, msgid, error, result]";
			return MC_RPC_IGNORED;
		}
		m->error = e[2];
		m->result = e[3];
		return MC_RPC_OK;
	default:
		if (n != 3 || !mc_rpc_str(&e[1], m->method, sizeof m->method) ||
		    e[2].type != MSGPACK_OBJECT_ARRAY) {
			*why = "a notification is [2, method, params]";
			return MC_RPC_IGNORED;
		}
		m->params = e[2];
		return MC_RPC_OK;
	}
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

/*
 * Which kind of error a code is, in Neovim's terms (0 exception: the call
 * failed; 1 validation: the call was wrong): Neovim's rpcrequest accepts
 * only these two in [type, message].
 */
static int
mc_rpc_error_type(const char *code)
{
	static const char *const validation[] = { MC_E_PROTO, MC_E_INVAL,
	    MC_E_NOJOB, MC_E_NOPROFILE, MC_E_MANAGED, MC_E_TOOBIG };
	size_t	i;

	for (i = 0; i < sizeof validation / sizeof validation[0]; i++)
		if (strcmp(code, validation[i]) == 0)
			return MC_ERR_VALIDATION;
	return MC_ERR_EXCEPTION;
}

/* error = [type, "CODE: message"] (protocol.h). */
void
mc_rpc_pack_response_error(msgpack_packer *pk, uint32_t msgid,
    const char *code, const char *message)
{
	size_t	clen = strlen(code), mlen = strlen(message);

	msgpack_pack_array(pk, 4);
	msgpack_pack_uint8(pk, MC_MSG_RESPONSE);
	msgpack_pack_uint32(pk, msgid);
	msgpack_pack_array(pk, 2);
	msgpack_pack_int(pk, mc_rpc_error_type(code));
	msgpack_pack_str(pk, clen + 2 + mlen);
	msgpack_pack_str_body(pk, code, clen);
	msgpack_pack_str_body(pk, ": ", 2);
	msgpack_pack_str_body(pk, message, mlen);
	msgpack_pack_nil(pk);
}

/*
 * Split a response's error into its code and message.  Reads the
 * [type, "CODE: message"] of protocol 3 and the {code, message} map of
 * protocol 2; whatever else, the code is "ERROR".
 */
void
mc_rpc_error_parse(const msgpack_object *err, char *code, size_t codelen,
    char *message, size_t msglen)
{
	const msgpack_object	*text = NULL;
	char			 buf[1024];
	size_t			 n;

	snprintf(code, codelen, "ERROR");
	snprintf(message, msglen, "(no message)");
	if (err->type == MSGPACK_OBJECT_ARRAY && err->via.array.size == 2)
		text = &err->via.array.ptr[1];
	else if (err->type == MSGPACK_OBJECT_MAP) {
		mc_rpc_str(mc_rpc_map_get(err, "code"), code, codelen);
		text = mc_rpc_map_get(err, "message");
	} else
		text = err;
	if (text == NULL || !mc_rpc_str(text, buf, sizeof buf))
		return;
	/* "EXXX: message": a code is E and capitals. */
	n = strspn(buf, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
	if (buf[0] == 'E' && n > 1 && strncmp(buf + n, ": ", 2) == 0 &&
	    n < codelen) {
		snprintf(code, codelen, "%.*s", (int)n, buf);
		snprintf(message, msglen, "%s", buf + n + 2);
	} else
		snprintf(message, msglen, "%s", buf);
}

void
mc_rpc_pack_notify(msgpack_packer *pk, const char *method, uint32_t nparams)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint8(pk, MC_MSG_NOTIFY);
	mc_rpc_pack_str(pk, method);
	msgpack_pack_array(pk, nparams);
}
