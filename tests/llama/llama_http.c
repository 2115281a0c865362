/* SPDX-License-Identifier: MIT */
/* The llama tests' HTTP helpers (llama_http.h). */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "child.h"
#include "llama_http.h"

/* A port on the loopback that nothing holds now. */
int
llama_free_port(void)
{
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	socklen_t		len = sizeof sin;
	int			fd, p;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	p = ntohs(sin.sin_port);
	close(fd);
	return p;
}

/*
 * curl -s -m 30 with the arguments of ap up to a NULL, then last (when
 * not NULL); its exit status, the start of its output in out.
 */
int
llama_curl_va(char *out, size_t outlen, const char *last, va_list ap)
{
	const char		*argv[24] = { CURL, "-s", "-m", "30" };
	char			*env[CHILD_ENV_MAX];
	struct child_result	 r;
	int			 n = 4;

	while (n < 22 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	if (last != NULL)
		argv[n++] = last;
	argv[n] = NULL;
	child_env(env, NULL);
	assert_int_equal(child_run(argv, env, &r), 0);
	if (out != NULL) {
		size_t	got = strlen(r.out) < outlen ? strlen(r.out) :
		    outlen - 1;

		memcpy(out, r.out, got);
		out[got] = '\0';
	}
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

/* curl with these arguments, up to a NULL. */
int
llama_curl(char *out, size_t outlen, ...)
{
	va_list	ap;
	int	status;

	va_start(ap, outlen);
	status = llama_curl_va(out, outlen, NULL, ap);
	va_end(ap);
	return status;
}
