/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the msgpack-RPC framing metalcapd and its clients share
 * (common/mc_rpc.c): requests and replies decoded whole and in pieces,
 * and every malformed message refused with its reason.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_rpc.h"
#include "protocol.h"
#include "unit.h"

/*
 * An error's text: "ECODE: message" is split, a code being E and at least
 * one more capital; anything else is all message, under the code ERROR.
 */
static void
mc_rpc_error_parse_text_check(const char *text, const char *code,
    const char *message)
{
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	msgpack_unpacked	u;
	char			 c[32], m[128];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint8(&pk, MC_ERR_VALIDATION);
	mc_rpc_pack_str(&pk, text);
	msgpack_unpacked_init(&u);
	assert_int_equal(msgpack_unpack_next(&u, sb.data, sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	mc_rpc_error_parse(&u.data, c, sizeof c, m, sizeof m);
	assert_string_equal(c, code);
	assert_string_equal(m, message);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

static void
test_protocol(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	const char		*why = NULL;
	char			 buf[64], msg[128];
	size_t			 i;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, 7, MC_M_ENABLE, 2);
	mc_rpc_pack_str(&pk, "llama");
	msgpack_pack_map(&pk, 1);
	mc_rpc_pack_str(&pk, "profile");
	mc_rpc_pack_str(&pk, "apple7");
	mc_rpc_pack_response_error(&pk, 8, MC_E_NOJOB, "no job named x");
	mc_rpc_pack_notify(&pk, MC_N_EVENT, 0);
	assert_int_equal(mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE), 0);
	/* One byte at a time: the decoder is incremental. */
	for (i = 0; i < sb.size; i++)
		assert_int_equal(mc_rpc_feed(&dec, sb.data + i, 1), 0);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_REQUEST);
	assert_int_equal(m.msgid, 7);
	assert_string_equal(m.method, "enable");
	assert_int_equal(m.params.via.array.size, 2);
	assert_true(mc_rpc_str(&m.params.via.array.ptr[0], buf, sizeof buf));
	assert_string_equal(buf, "llama");
	assert_true(mc_rpc_str(mc_rpc_map_get(&m.params.via.array.ptr[1],
	    "profile"), buf, sizeof buf));
	assert_string_equal(buf, "apple7");
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_RESPONSE);
	/* [type, "CODE: message"], the shape Neovim and pynvim read. */
	assert_int_equal(m.error.type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(m.error.via.array.size, 2);
	assert_int_equal(m.error.via.array.ptr[0].via.u64, MC_ERR_VALIDATION);
	assert_true(mc_rpc_str(&m.error.via.array.ptr[1], msg, sizeof msg));
	assert_string_equal(msg, "ENOJOB: no job named x");
	mc_rpc_error_parse(&m.error, buf, sizeof buf, msg, sizeof msg);
	assert_string_equal(buf, "ENOJOB");
	assert_string_equal(msg, "no job named x");
	mc_rpc_error_parse_text_check("E: no code, one letter", "ERROR",
	    "E: no code, one letter");
	mc_rpc_error_parse_text_check("EIO: disk full", "EIO", "disk full");
	mc_rpc_error_parse_text_check("Error: a word", "ERROR", "Error: a word");
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_NOTIFY);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_MORE);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
}

/*
 * Bytes that are not msgpack cost the connection (MALFORMED); a request
 * whose msgid is known is answered (BADREQUEST); other msgpack is ignored.
 */
static void
test_protocol_malformed(void **state)
{
	static const char	badreq[] = "a request is [0, msgid, method, "
	    "params]: 4 elements";
	static const struct { const char *bytes; size_t len; int st;
	    const char *why; } cases[] = {
		{ "\x01", 1, MC_RPC_IGNORED, "not a msgpack-RPC message: "
		    "[type, ...] with type 0, 1 or 2" },
		{ "\x94\x05\x01\xa1m\x90", 6, MC_RPC_IGNORED, "not a "
		    "msgpack-RPC message: [type, ...] with type 0, 1 or 2" },
		{ "\x94\x00\xff\xa1m\x90", 6, MC_RPC_IGNORED, "a request's "
		    "msgid must be an integer from 0 to 2^32-1" },
		{ "\x94\x00\x01\x01\x90", 5, MC_RPC_BADREQUEST, "the method "
		    "must be a string (str or bin) of at most 64 bytes" },
		{ "\x94\x00\x01\xa1m\x01", 6, MC_RPC_BADREQUEST,
		    "params must be an array" },
		{ "\x94\x00\x01\xa1m\xc0", 6, MC_RPC_BADREQUEST,
		    "params must be an array" },
		{ "\x93\x00\x01\xa1m", 5, MC_RPC_BADREQUEST, badreq },
		{ "\x95\x00\x01\xa1m\x90\x90", 7, MC_RPC_BADREQUEST, badreq },
		/* A method with a NUL in it is no name of ours. */
		{ "\x94\x00\x01\xa2m\x00\x90", 7, MC_RPC_BADREQUEST, "the "
		    "method must be a string (str or bin) of at most 64 bytes" },
		/* Responses and notifications of any other shape: ignored. */
		{ "\x93\x01\x01\xc0", 4, MC_RPC_IGNORED,
		    "a response is [1, msgid, error, result]" },
		{ "\x92\x02\xa1m", 4, MC_RPC_IGNORED,
		    "a notification is [2, method, params]" },
		{ "\xc1", 1, MC_RPC_MALFORMED, "not msgpack" },
		/* Refused from the headers alone, before msgpack-c allocates
		 * (fuzz_rpc found a 4-byte array header costing 40 GB). */
		{ "\x94\x00\x01\xa1m\xdd\x7f\xff\xff\xff", 10,
		    MC_RPC_MALFORMED, "a container larger than the size limit" },
		{ "\xdb\x7f\xff\xff\xff", 5, MC_RPC_MALFORMED,
		    "message over the size limit" },
		{ "\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91"
		    "\x91\x91\x91\x91\x91", 17, MC_RPC_MALFORMED,
		    "msgpack nested too deep" },
	};
	struct mc_rpc_decoder	dec;
	struct mc_rpc_message	m;
	const char		*why;
	char			 big[100];
	size_t			 i;
	int			 st;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
		why = NULL;
		/* Refused as the bytes arrive, or as a whole message. */
		if (mc_rpc_feed(&dec, cases[i].bytes, cases[i].len) == -1)
			why = dec.error;
		else if ((st = mc_rpc_next(&dec, &m, &why)) != cases[i].st)
			fail_msg("case %zu: status %d, want %d", i, st,
			    cases[i].st);
		if (why == NULL || strcmp(why, cases[i].why) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, why ? why :
			    "(accepted)", cases[i].why);
		mc_rpc_decoder_free(&dec);
	}
	/*
	 * The limit to the byte, whatever sits at the end: a bin8 parameter
	 * and a bare str8 of exactly 64 bytes pass at limit 64, one more does
	 * not.  (A parameter inside a container used to be charged a byte
	 * for its container as well: the limit was one byte smaller there.)
	 */
	{
		static const struct { const char *head; size_t hlen; } shapes[] = {
			{ "\x94\x00\x01\xa5hello\x91\xc4", 11 },	/* bin8 */
			{ "\x94\x00\x01\xa5hello\x91\xd9", 11 },	/* str8 */
			{ "\xd9", 1 },				/* bare */
		};
		size_t	k, extra, len;

		for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
			for (extra = 0; extra < 2; extra++) {
				len = 64 + extra;
				memcpy(big, shapes[k].head, shapes[k].hlen);
				big[shapes[k].hlen] = (char)(len -
				    shapes[k].hlen - 1);
				memset(big + shapes[k].hlen + 1, 'x', len -
				    shapes[k].hlen - 1);
				mc_rpc_decoder_init(&dec, 64);
				if ((mc_rpc_feed(&dec, big, len) == 0) != !extra)
					fail_msg("shape %zu, %zu bytes: %s", k,
					    len, extra ? "accepted" :
					    dec.error);
				mc_rpc_decoder_free(&dec);
			}
	}
	/* A method name as bin, as pynvim and older packers send it. */
	mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
	mc_rpc_feed(&dec, "\x94\x00\x09\xc4\x05hello\x91\xc4\x01x", 14);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.msgid, 9);
	assert_string_equal(m.method, "hello");
	assert_true(mc_rpc_str(&m.params.via.array.ptr[0], big, sizeof big));
	assert_string_equal(big, "x");
	mc_rpc_decoder_free(&dec);
	/* Found by fuzz_rpc: an empty method name (msgpack gives no storage). */
	mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
	mc_rpc_feed(&dec, "\x94\x00\x03\xa0\x90", 5);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_string_equal(m.method, "");
	mc_rpc_decoder_free(&dec);
	/* A message larger than the limit is refused at its header. */
	mc_rpc_decoder_init(&dec, 64);
	memset(big, 0, sizeof big);
	big[0] = (char)0xda;	/* str 16 of 0x00ff bytes */
	big[1] = 0x00;
	big[2] = (char)0xff;
	assert_int_equal(mc_rpc_feed(&dec, big, 3), -1);
	assert_string_equal(dec.error, "message over the size limit");
	mc_rpc_decoder_free(&dec);
	/* One within it is buffered until whole. */
	mc_rpc_decoder_init(&dec, 64);
	big[2] = 60;
	assert_int_equal(mc_rpc_feed(&dec, big, 30), 0);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_MORE);
	assert_int_equal(mc_rpc_feed(&dec, big, 33), 0);
	/* Whole, and valid msgpack, but no message: nothing to answer. */
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_IGNORED);
	mc_rpc_decoder_free(&dec);
}

/*
 * Every msgpack format, the longer encodings of small values included
 * (valid msgpack that pynvim and other packers may write), as the
 * params of one request and followed by a second: the scanner that
 * guards the decoder must know each format's length.  Fed a byte at a
 * time, the stream is partial up to the first request's last byte and
 * whole just after it, and each param is the object msgpack-c's own
 * unpacker reads from the same bytes.
 */
static void
test_protocol_every_format(void **state)
{
	static const unsigned char params[] =
	    "\xdc\x00\x28"			/* array 16: 40 params */
	    "\xc0\xc2\xc3\x05\xe0"		/* nil false true fixints */
	    "\xcc\xfe" "\xcd\x01\x02" "\xce\x01\x02\x03\x04"
	    "\xcf\x01\x02\x03\x04\x05\x06\x07\x08"
	    "\xd0\x80" "\xd1\x80\x00" "\xd2\x80\x00\x00\x00"
	    "\xd3\x80\x00\x00\x00\x00\x00\x00\x00"
	    "\xca\x3f\x80\x00\x00"		/* float 32: 1.0 */
	    "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00"
	    "\xa3" "abc" "\xd9\x03" "abc" "\xda\x00\x03" "abc"
	    "\xdb\x00\x00\x00\x03" "abc"
	    "\xc4\x02" "xy" "\xc5\x00\x02" "xy" "\xc6\x00\x00\x00\x02" "xy"
	    "\x92\x01\x02" "\xdc\x00\x01\x03" "\xdd\x00\x00\x00\x01\x04"
	    "\x81\xa1k\x01" "\xde\x00\x01\xa1k\x02"
	    "\xdf\x00\x00\x00\x01\xa1k\x03"
	    "\xd4\x01" "A" "\xd5\x02" "AB" "\xd6\x03" "ABCD"
	    "\xd7\x04" "ABCDEFGH" "\xd8\x05" "ABCDEFGHIJKLMNOP"
	    "\xc7\x03\x06" "abc" "\xc8\x00\x03\x07" "abc"
	    "\xc9\x00\x00\x00\x03\x08" "abc"
	    "\xa0" "\x90" "\x80" "\xc7\x00\x09";	/* empty ones */
	unsigned char		 stream[512];
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_unpacked	 own;
	const char		*why = NULL;
	size_t			 first, len = 0, i, off = 0;

	(void)state;
	memcpy(stream, "\x94\x00\x01\xa1m", 5);
	len = 5;
	memcpy(stream + len, params, sizeof params - 1);
	len += sizeof params - 1;
	first = len;
	memcpy(stream + len, "\x94\x00\x02\xa1n\x90", 6);
	len += 6;
	assert_int_equal(mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE), 0);
	for (i = 0; i < len; i++) {
		assert_int_equal(mc_rpc_feed(&dec, (const char *)stream + i,
		    1), 0);
		if (mc_rpc_partial(&dec) != (i + 1 != first && i + 1 != len))
			fail_msg("after byte %zu of %zu: partial is %d", i + 1,
			    len, mc_rpc_partial(&dec));
	}
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.msgid, 1);
	msgpack_unpacked_init(&own);
	assert_int_equal(msgpack_unpack_next(&own, (const char *)params,
	    sizeof params - 1, &off), MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, sizeof params - 1);
	assert_int_equal(own.data.via.array.size, 40);
	assert_true(msgpack_object_equal(m.params, own.data));
	msgpack_unpacked_destroy(&own);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.msgid, 2);
	assert_string_equal(m.method, "n");
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_MORE);
	mc_rpc_decoder_free(&dec);
}

/*
 * A key a map does not have is found nowhere else: msgpack-c lays a
 * nested map's pairs right after its parent's in one zone, so a search
 * one pair too far would find the child's.
 */
static void
test_map_get_stays_in_its_map(void **state)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;
	const msgpack_object	*v;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 1);
	mc_rpc_pack_str(&pk, "outer");
	msgpack_pack_map(&pk, 1);
	mc_rpc_pack_str(&pk, "inner");
	msgpack_pack_uint32(&pk, 7);
	msgpack_unpacked_init(&u);
	assert_int_equal(msgpack_unpack_next(&u, sb.data, sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	assert_null(mc_rpc_map_get(&u.data, "inner"));
	assert_non_null(v = mc_rpc_map_get(&u.data, "outer"));
	assert_non_null(v = mc_rpc_map_get(v, "inner"));
	assert_int_equal(v->via.u64, 7);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_protocol_malformed),
		cmocka_unit_test(test_protocol_every_format),
		cmocka_unit_test(test_map_get_stays_in_its_map),
	};

	unit_start();
	return cmocka_run_group_tests_name("protocol", tests, NULL, NULL);
}
