/*
 * Compatibility header for the macOS cross-build: the feature tests
 * libplist's configure would have found true on macOS.
 */
#define PACKAGE_VERSION		"2.7.0"
#define HAVE_STRDUP		1
#define HAVE_STRNDUP		1
#define HAVE_STRERROR		1
#define HAVE_TIMEGM		1
#define HAVE_GMTIME_R		1
#define HAVE_LOCALTIME_R	1
#define HAVE_MEMMEM		1
#define HAVE_STRPTIME		1
#define HAVE_TM_TM_GMTOFF	1
#define HAVE_TM_TM_ZONE		1
