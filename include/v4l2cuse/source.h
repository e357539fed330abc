/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The frame-source ABI. A source produces frames into memory it is lent;
 * it knows nothing of CUSE or of videobuf internals.
 *
 * Threading: every op is called from the daemon's dispatcher thread unless
 * its comment says otherwise, and no op may block (a file read or a camera
 * DQBUF that would wait returns -EAGAIN instead).
 *
 * Errors are negative errno values.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#define V4L2CUSE_SOURCE_ABI 2

struct v4l2cuse_source_ops;

/* Embedded first in every implementation's private struct; set by create(). */
struct v4l2cuse_source {
	const struct v4l2cuse_source_ops *ops;
};

/* One frame to fill. The memory is lent for the duration of produce() only. */
struct v4l2cuse_frame {
	void *data;				/* in: buffer memory */
	size_t length;				/* in: its size, >= fmt->sizeimage */
	const struct v4l2_pix_format *fmt;	/* in: the negotiated format */
	uint32_t sequence;			/* in: frame number since start */
	uint64_t timestamp_ns;			/* in: CLOCK_MONOTONIC now; out: the
						 * frame's own time if the source knows
						 * it (a stream's clock), never later */
	uint32_t bytesused;			/* out: payload size */
	bool error;				/* out: frame is damaged (BUF_FLAG_ERROR) */
	uint32_t field;				/* out: V4L2_FIELD_TOP or _BOTTOM for a
						 * format of field V4L2_FIELD_ALTERNATE
						 * (one field per frame), else unused */
};

/* A control the source offers (a subset of struct v4l2_query_ext_ctrl). */
struct v4l2cuse_control {
	uint32_t id;			/* V4L2_CID_* */
	uint32_t type;			/* V4L2_CTRL_TYPE_INTEGER, BOOLEAN, MENU, ... */
	const char *name;
	int64_t minimum, maximum;
	uint64_t step;
	int64_t default_value;
	uint32_t flags;			/* V4L2_CTRL_FLAG_* */
	const char *const *menu;	/* MENU and INTEGER_MENU: names for minimum..maximum,
					 * NULL = skipped */
	const int64_t *menu_int;	/* INTEGER_MENU: values for minimum..maximum */
};

/*
 * Source flags. V4L2CUSE_SOURCE_INPUT: the positional ARG names an input
 * (a device node, a file) that one instance of the source can serve to
 * several devices at once (daemon/hub.c); see v4l2cuse_source_input_key().
 */
#define V4L2CUSE_SOURCE_INPUT	(1u << 0)

struct v4l2cuse_source_ops {
	uint32_t abi;			/* V4L2CUSE_SOURCE_ABI */
	const char *name;		/* "pattern", "file", "uvc" */
	uint32_t flags;			/* V4L2CUSE_SOURCE_* */

	/*
	 * Required. @args is the --source spec after the name, with the ':'
	 * that introduces an ARG removed: "pattern:smpte,hscroll=2" gives
	 * "smpte,hscroll=2", "pattern,hscroll=2" gives ",hscroll=2" (no ARG),
	 * "pattern" gives "" (NULL is accepted too). v4l2cuse_opts_parse()
	 * splits that. On failure returns -errno and a newly allocated
	 * one-line message in *ret_error (g_free; @ret_error is never NULL:
	 * v4l2cuse_source_create() passes its own). On success the caller
	 * owns *ret_src.
	 */
	int (*create)(const char *args, struct v4l2cuse_source **ret_src,
		      char **ret_error);

	/* Required. Accepts never-started sources; stops a started one. */
	void (*destroy)(struct v4l2cuse_source *src);

	/* Required. The index-th fourcc offered, -EINVAL past the end. */
	int (*enum_format)(struct v4l2cuse_source *src, unsigned int index,
			   uint32_t *ret_fourcc);

	/* Required. The index-th discrete size for @fourcc, -EINVAL past the end. */
	int (*enum_framesize)(struct v4l2cuse_source *src, uint32_t fourcc,
			      unsigned int index, uint32_t *ret_width,
			      uint32_t *ret_height);

	/* Required. The index-th discrete interval, -EINVAL past the end. */
	int (*enum_frameinterval)(struct v4l2cuse_source *src, uint32_t fourcc,
				  uint32_t width, uint32_t height,
				  unsigned int index, struct v4l2_fract *ret);

	/*
	 * Optional. Rewrite @pix to the closest format the source can
	 * produce. The default (v4l2cuse_source_negotiate()) picks the
	 * nearest enumerated fourcc and size and fills the rest with
	 * v4l2cuse_format_fill() (progressive: field NONE). A source that
	 * passes interlaced frames through answers the field order asked
	 * for in @pix->field when it has it (V4L2_FIELD_ANY asks for its
	 * choice), and for V4L2_FIELD_TOP, _BOTTOM and _ALTERNATE @pix->height
	 * is the height of one field, as in V4L2.
	 */
	int (*negotiate)(struct v4l2cuse_source *src, struct v4l2_pix_format *pix);

	/*
	 * Optional. The format and frame interval a device starts at when
	 * its configuration names none (a camera's current one): fills
	 * @pix's pixelformat, width, height and *@ret_interval. Without it
	 * the device asks for the first format enumerated, at 640x480 and
	 * 30 fps (negotiated to the nearest the source has).
	 */
	int (*default_format)(struct v4l2cuse_source *src, struct v4l2_pix_format *pix,
			      struct v4l2_fract *ret_interval);

	/*
	 * Required. Start producing @pix at @interval (already negotiated).
	 * May fail (-EIO, -EBUSY, ...): then nothing was started, and the
	 * error reaches the consumer's STREAMON or read(). An input that is
	 * lost (a camera unplugged) is no failure: the source starts and
	 * reports no signal until it is back.
	 */
	int (*start)(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
		     const struct v4l2_fract *interval);

	/* Required. Stop; safe to call when not started. */
	void (*stop)(struct v4l2cuse_source *src);

	/*
	 * Required, never blocks. Fill @frame. 0: filled (raw formats:
	 * bytesused = sizeimage; compressed: the payload size, <= sizeimage,
	 * and the daemon pads). A frame filled with frame->error set is
	 * delivered with V4L2_BUF_FLAG_ERROR. Errors:
	 *   -EAGAIN: nothing to deliver now (a source with a wake fd between
	 *     its frames, or an input that is still starting, e.g. a file
	 *     whose decoder has no first frame yet); the daemon keeps the
	 *     buffer and the sequence number and asks again at the next wake-up
	 *     or tick.
	 *   -ENODATA: this frame was dropped on purpose (nothing written; the
	 *     daemon keeps the buffer and counts the sequence number as
	 *     skipped, so clients see a gap).
	 *   -ENOLINK: no signal: the input is lost at runtime (a camera
	 *     unplugged, a file that became unreadable). The source writes
	 *     nothing and keeps reporting it at the negotiated rate (sources
	 *     with a wake fd wake up at that rate for it) until the input is
	 *     back; the daemon fills the frame from the device's placeholder
	 *     (its placeholder= source, else the built-in "NO SIGNAL" card),
	 *     and reports the signal lost. Sources never draw placeholders.
	 *   -ENODEV: gone for good, every later call fails the same way (the
	 *     daemon treats it like -ENOLINK).
	 *   -ECONNREFUSED: the input is there but refuses to go on with the
	 *     negotiated configuration (a camera that came back and no longer
	 *     streams it). The source logs what it was told, once; the daemon
	 *     ends the stream with an error (DQBUF and read() fail with EIO,
	 *     poll() reports POLLERR, as vb2_queue_error()) until the consumers
	 *     stop; the next start() tries again.
	 *   other errors (-EIO, ...): this frame failed (the daemon sends its
	 *     placeholder= source's frame, or an ERROR buffer).
	 * Sources without wake_fd are called at the frame interval by the
	 * daemon's timer.
	 */
	int (*produce)(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame);

	/* Optional. An fd that turns readable when produce() will succeed. */
	int (*wake_fd)(struct v4l2cuse_source *src);

	/*
	 * Optional. Sizes as one range instead of a list: the source takes any
	 * size from min to max in steps (enumerated as V4L2_FRMSIZE_TYPE_STEPWISE,
	 * and its intervals as V4L2_FRMIVAL_TYPE_CONTINUOUS from *ret_fastest to
	 * *ret_slowest). -EINVAL: this fourcc has discrete sizes.
	 */
	int (*size_range)(struct v4l2cuse_source *src, uint32_t fourcc,
			  struct v4l2_frmsize_stepwise *ret,
			  struct v4l2_fract *ret_fastest, struct v4l2_fract *ret_slowest);

	/*
	 * Optional, the endpoint of an output device (a loopback's writer
	 * node): between start() and stop() the device hands over each
	 * whole frame the writer wrote, in the negotiated format
	 * (@frame->bytesused bytes at @frame->data, valid during the call).
	 * 0, or -errno: the frame was refused (counted, not shown).
	 */
	int (*consume)(struct v4l2cuse_source *src, const struct v4l2cuse_frame *frame);

	/* Optional. The index-th control, NULL past the end. */
	const struct v4l2cuse_control *(*control)(struct v4l2cuse_source *src,
						  unsigned int index);
	/* Optional (required with control). Value of control @id. */
	int (*get_control)(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value);
	/*
	 * Optional (required with control). Set control @id; the value is
	 * already validated and clamped against the description.
	 */
	int (*set_control)(struct v4l2cuse_source *src, uint32_t id, int64_t value);

	/*
	 * Optional (with control). Controls that change outside
	 * set_control() (another application sets them on the camera, an
	 * automatic control changes its own): an fd that turns readable when
	 * there are changes to take in. The device watches it for as long as
	 * it uses the source, streaming or not, and then calls
	 * control_update(). The fd stays the same for the source's life.
	 */
	int (*control_fd)(struct v4l2cuse_source *src);
	/*
	 * Optional (required with control_fd), never blocks. Take in the
	 * pending changes (control_fd() is no longer readable for them):
	 * afterwards get_control() returns the new values and control()'s
	 * descriptions carry the new flags (V4L2_CTRL_FLAG_INACTIVE) and
	 * ranges; the device compares and sends V4L2_EVENT_CTRL.
	 */
	void (*control_update)(struct v4l2cuse_source *src);
};

/*
 * Registry: "pattern[:NAME][,opt=v...]", "file:PATH[,...]", "uvc:/dev/videoN".
 * NULL or "" means "pattern". An unknown name fails with -ENOENT and the
 * message "unknown source 'xyz' (known: pattern, file, uvc, ...)". Every failure comes with
 * a one-line message in *ret_error (when not NULL; g_free it).
 */
int v4l2cuse_source_create(const char *spec, struct v4l2cuse_source **ret_src,
			   char **ret_error);
/* NULL for an unknown name. */
const struct v4l2cuse_source_ops *v4l2cuse_source_lookup(const char *name);
/*
 * What @spec reads, as a key equal for specs that one source instance can
 * serve together: for a V4L2CUSE_SOURCE_INPUT source, "NAME:" and the
 * identity of what ARG names (a character device by its number, a file by
 * its device and inode, so that /dev/video0 and a /dev/v4l/by-id link to
 * it are the same input) and the options after ARG as written. NULL for
 * other sources and for an ARG that names nothing (g_free the key).
 */
char *v4l2cuse_source_input_key(const char *spec);
/*
 * What network @spec reaches by itself (docs/service.md, "Network"): only
 * a uri: whose scheme is not file: does. ADDRESS: its one peer is the
 * literal IP address in *ret_peer (as inet_ntop() writes it, a zone
 * dropped). ANY: the peer is a host name (in *ret_peer; its addresses are
 * known only when it is resolved), or anyone (*ret_peer NULL): udp://,
 * rtp://, rist:// receive on a port from any sender, as does srt:// with
 * mode=listener, no host, 0.0.0.0, :: or a multicast group; a URI that
 * GLib cannot parse counts as that too. *ret_peer is always set (g_free).
 * A gst: description is NONE here: what it connects to is not known.
 */
enum v4l2cuse_source_net {
	V4L2CUSE_SOURCE_NET_NONE,
	V4L2CUSE_SOURCE_NET_ADDRESS,
	V4L2CUSE_SOURCE_NET_ANY,
};
enum v4l2cuse_source_net v4l2cuse_source_network(const char *spec, char **ret_peer);
/* The index-th registered source, NULL past the end (for --help). */
const struct v4l2cuse_source_ops *v4l2cuse_source_by_index(unsigned int index);

/*
 * Default negotiation used when ops->negotiate is NULL: keeps
 * pix->pixelformat if the source enumerates it, else takes the first
 * enumerated fourcc; then takes the enumerated discrete size nearest to
 * pix->width x height by |dw| + |dh| (ties: the earlier enumerated one;
 * with no sizes enumerated, the size is clamped to 1..V4L2CUSE_MAX_*),
 * and fills the rest with v4l2cuse_format_fill(). Deterministic, so
 * negotiating a negotiated format returns it unchanged (TRY(G) == G).
 */
int v4l2cuse_source_negotiate_default(struct v4l2cuse_source *src,
				      struct v4l2_pix_format *pix);

/* Does @src enumerate @fourcc (enum_format)? */
bool v4l2cuse_source_offers_format(struct v4l2cuse_source *src, uint32_t fourcc);
/* Does @src enumerate the discrete size @width x @height of @fourcc (enum_framesize)? */
bool v4l2cuse_source_offers_size(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
				 uint32_t height);

/*
 * Option lists for create(): "ARG,key=value,key=value,..." in the form
 * described at create() (a leading ',' means there is no ARG). A bare "key"
 * means "key=1"; empty items are skipped; values cannot contain ','.
 * Lists inside a value use '+' or ';' (sizes=640x480+320x240).
 * Errors are one line, prefixed with the source name, e.g.
 *   "pattern: unknown option 'foo' (known: sizes, fps, ...)"
 *   "pattern: option 'hscroll': expected an integer in -8192..8192, got 'x'"
 * and functions that fail return -EINVAL and set *ret_error (if not NULL).
 */
struct v4l2cuse_opts;

/* @known_keys is NULL-terminated; a key outside it, or given twice, fails. */
int v4l2cuse_opts_parse(const char *source_name, const char *args,
			const char *const *known_keys,
			struct v4l2cuse_opts **ret_opts, char **ret_error);
void v4l2cuse_opts_free(struct v4l2cuse_opts *opts);	/* NULL-safe */
static inline void
v4l2cuse_opts_freep(struct v4l2cuse_opts **opts)
{
	v4l2cuse_opts_free(*opts);
}
/* The positional ARG, NULL when there is none. */
const char *v4l2cuse_opts_arg(const struct v4l2cuse_opts *opts);
/* Whether @key was given. */
bool v4l2cuse_opts_has(const struct v4l2cuse_opts *opts, const char *key);
/* The raw value of @key, or @def. The string lives as long as @opts. */
const char *v4l2cuse_opts_get_str(const struct v4l2cuse_opts *opts, const char *key,
				  const char *def);
/* A boolean (v4l2cuse_parse_bool(): 1/0, yes/no, true/false, on/off), or @def. */
int v4l2cuse_opts_get_bool(const struct v4l2cuse_opts *opts, const char *key,
			   bool def, bool *ret, char **ret_error);
/* A decimal integer in min..max (ret untouched on failure). */
int v4l2cuse_opts_get_int(const struct v4l2cuse_opts *opts, const char *key,
			  int64_t def, int64_t min, int64_t max, int64_t *ret,
			  char **ret_error);
int v4l2cuse_opts_get_uint(const struct v4l2cuse_opts *opts, const char *key,
			   uint32_t def, uint32_t min, uint32_t max, uint32_t *ret,
			   char **ret_error);
/* One-line error "<source>: <message>" for checks a source does itself. */
char *v4l2cuse_opts_error(const struct v4l2cuse_opts *opts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The test-pattern source ("pattern", sources/testpattern.c); the header
 * comment of that file lists its options, patterns and pixel values.
 */
extern const struct v4l2cuse_source_ops v4l2cuse_testpattern_ops;

/*
 * The file source ("file:PATH[,opt=v...]", sources/file.c) and the camera
 * passthrough ("uvc:/dev/videoN[,opt=v...]", sources/uvc.c); the header
 * comments of those files list their options.
 */
extern const struct v4l2cuse_source_ops v4l2cuse_file_ops;
extern const struct v4l2cuse_source_ops v4l2cuse_uvc_ops;

/*
 * The live GStreamer source, "gst:PIPELINE[,opt=v...]" and
 * "uri:URI[,opt=v...]" (sources/gst-live.c, registered when built with
 * -Dgstreamer); the header comment of that file lists its options.
 */
extern const struct v4l2cuse_source_ops v4l2cuse_gst_ops;
extern const struct v4l2cuse_source_ops v4l2cuse_uri_ops;

/*
 * Its private "Test Pattern" MENU control: a driver-private id in the user
 * class (id & 0xffff >= 0x1000). NB for the daemon: v4l2-compliance 1.22
 * also queries private user-class controls the old way, as
 * V4L2_CID_PRIVATE_BASE + n (n-th driver-private user-class control in id
 * order, INTEGER64/STRING/compound skipped), and expects QUERY_EXT_CTRL /
 * QUERYCTRL to answer with id == V4L2_CID_PRIVATE_BASE + n and EINVAL after
 * the last one, as the kernel's control framework does.
 */
#define V4L2CUSE_CID_PRIVATE_BASE	(V4L2_CID_USER_BASE | 0xf000)
#define V4L2CUSE_CID_TEST_PATTERN	(V4L2CUSE_CID_PRIVATE_BASE + 0)

/*
 * The rectangle the text overlay may touch in frames of @width x @height
 * with the source's current overlay options (all zero when it is off).
 * Outside it, consecutive frames are byte-identical unless the source was
 * asked for motion (hscroll, vscroll, box) or shows the noise pattern. Its
 * position is fixed at the top-left corner and is not affected by flips:
 * left = top = 0, width = min(296, width), height = min(8 + 16 * lines,
 * height), both rounded down to even, with lines = the number of enabled
 * overlay lines (4 by default: 296x72 at 640x480 and above).
 * Returns -EINVAL if @src is not a test-pattern source.
 */
int v4l2cuse_testpattern_overlay_rect(struct v4l2cuse_source *src, uint32_t width,
				      uint32_t height, struct v4l2_rect *ret);

/* Wrappers that supply defaults for optional ops. */
static inline void
v4l2cuse_source_destroy(struct v4l2cuse_source *src)
{
	if (src)
		src->ops->destroy(src);
}

static inline int
v4l2cuse_source_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	return src->ops->negotiate ? src->ops->negotiate(src, pix)
				   : v4l2cuse_source_negotiate_default(src, pix);
}

/*
 * The format and interval to start at: default_format(), else the first
 * format enumerated at 640x480 and 1/30 s. Only pixelformat, width and
 * height are set in @pix (to be negotiated).
 */
static inline int
v4l2cuse_source_default_format(struct v4l2cuse_source *src, struct v4l2_pix_format *pix,
			       struct v4l2_fract *ret_interval)
{
	if (src->ops->default_format)
		return src->ops->default_format(src, pix, ret_interval);
	if (src->ops->enum_format(src, 0, &pix->pixelformat) < 0)
		return -EINVAL;
	pix->width = 640;
	pix->height = 480;
	*ret_interval = (struct v4l2_fract){ 1, 30 };
	return 0;
}

static inline int
v4l2cuse_source_wake_fd(struct v4l2cuse_source *src)
{
	return src->ops->wake_fd ? src->ops->wake_fd(src) : -1;
}

static inline int
v4l2cuse_source_size_range(struct v4l2cuse_source *src, uint32_t fourcc,
			   struct v4l2_frmsize_stepwise *ret, struct v4l2_fract *ret_fastest,
			   struct v4l2_fract *ret_slowest)
{
	return src->ops->size_range ? src->ops->size_range(src, fourcc, ret, ret_fastest,
							   ret_slowest)
				    : -EINVAL;
}

static inline int
v4l2cuse_source_consume(struct v4l2cuse_source *src, const struct v4l2cuse_frame *frame)
{
	return src->ops->consume ? src->ops->consume(src, frame) : -EINVAL;
}

static inline const struct v4l2cuse_control *
v4l2cuse_source_control(struct v4l2cuse_source *src, unsigned int index)
{
	return src->ops->control ? src->ops->control(src, index) : NULL;
}

static inline int
v4l2cuse_source_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	return src->ops->get_control ? src->ops->get_control(src, id, ret) : -EINVAL;
}

static inline int
v4l2cuse_source_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	return src->ops->set_control ? src->ops->set_control(src, id, value) : -EINVAL;
}

static inline int
v4l2cuse_source_control_fd(struct v4l2cuse_source *src)
{
	return src->ops->control_fd ? src->ops->control_fd(src) : -1;
}

static inline void
v4l2cuse_source_control_update(struct v4l2cuse_source *src)
{
	if (src->ops->control_update)
		src->ops->control_update(src);
}
