/*
 * Compatibility header for the macOS cross-build: the feature tests
 * libplist's configure would have found true on macOS.
 */
#define HAVE_GMTIME_R		1
#define HAVE_LOCALTIME_R	1
#define HAVE_MEMMEM		1
#define HAVE_STRPTIME		1
#define HAVE_TM_TM_GMTOFF	1
#define HAVE_TM_TM_ZONE		1
