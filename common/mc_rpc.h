/* SPDX-License-Identifier: MIT */
/*
 * msgpack-RPC framing on msgpack-c, shared by daemon and client: building
 * messages, and strict incremental decoding with a size limit.  No I/O, no
 * logging: errors are returned.
 */
#ifndef MC_RPC_H
#define MC_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#define MC_RPC_MAX_DEPTH	16	/* containers within containers */

/*
 * The headers of the incoming msgpack, followed as bytes arrive: msgpack-c's
 * C unpacker allocates a container's storage from its declared size before
 * any element arrives, and has no limit of its own.
 */
struct mc_rpc_scan {
	uint8_t		hdr[9];		/* type byte, then length or count */
	uint8_t		hdr_len;
	uint8_t		hdr_want;
	uint64_t	skip;		/* payload bytes still to pass */
	uint64_t	left[MC_RPC_MAX_DEPTH];	/* items due, per container */
	int		depth;
	uint64_t	due;		/* elements not yet begun: a byte each */
	uint64_t	used;		/* bytes of the current message */
};

/* An incremental decoder for one byte stream. */
struct mc_rpc_decoder {
	msgpack_unpacker	unpacker;
	msgpack_unpacked	result;
	size_t			limit;
	struct mc_rpc_scan	scan;
	const char		*error;		/* why mc_rpc_feed refused */
};

/* One decoded message; objects point into the decoder's zone. */
struct mc_rpc_message {
	int			 type;		/* MC_MSG_* */
	uint32_t		 msgid;		/* request and response */
	char			 method[64 + 1];/* request and notification */
	msgpack_object		 params;	/* request, notification: array */
	msgpack_object		 error;		/* response */
	msgpack_object		 result;	/* response */
};

enum mc_rpc_status {
	MC_RPC_OK = 0,		/* *msg is filled */
	MC_RPC_MORE = 1,	/* need more bytes */
	MC_RPC_BADREQUEST = 2,	/* a request to answer with an error:
				   msgid is filled, why says what is wrong */
	MC_RPC_IGNORED = 3,	/* msgpack, but nothing to answer */
	MC_RPC_MALFORMED = -1,	/* not msgpack: the stream is lost */
	MC_RPC_TOOBIG = -2,	/* a message past the limit */
	MC_RPC_NOMEM = -3,
};

int	mc_rpc_decoder_init(struct mc_rpc_decoder *, size_t limit);
void	mc_rpc_decoder_free(struct mc_rpc_decoder *);
int	mc_rpc_feed(struct mc_rpc_decoder *, const char *, size_t);
bool	mc_rpc_partial(const struct mc_rpc_decoder *);
const char *mc_rpc_scan(struct mc_rpc_scan *, const uint8_t *, size_t,
	    size_t limit);
enum mc_rpc_status mc_rpc_next(struct mc_rpc_decoder *,
	    struct mc_rpc_message *, const char **why);

void	mc_rpc_pack_request(msgpack_packer *, uint32_t msgid,
	    const char *method, uint32_t nparams);
void	mc_rpc_pack_response_ok(msgpack_packer *, uint32_t msgid);
void	mc_rpc_pack_response_error(msgpack_packer *, uint32_t msgid,
	    const char *code, const char *message);
void	mc_rpc_error_parse(const msgpack_object *error, char *code,
	    size_t codelen, char *message, size_t msglen);
void	mc_rpc_pack_notify(msgpack_packer *, const char *method,
	    uint32_t nparams);
void	mc_rpc_pack_str(msgpack_packer *, const char *);

/* Small readers for msgpack objects. */
bool	mc_rpc_str(const msgpack_object *, char *buf, size_t len);
const msgpack_object *mc_rpc_map_get(const msgpack_object *map,
	    const char *key);

#endif
