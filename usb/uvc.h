/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The camera as USB sees it: a USB Video Class 1.0 function with one bulk
 * IN endpoint (docs/usb.md). Its descriptors are generated from the node's
 * modes and controls; control transfers (standard requests, probe/commit,
 * the Processing Unit's and Camera Terminal's controls) are answered here,
 * and what they mean for the node (start streaming this mode, stop, read
 * or write a control) goes to the caller's ops. No I/O of its own: the
 * unit tests and the fuzz harness drive it with bytes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"

#define UVC_EP_IN		0x81	/* the one streaming endpoint */
#define UVC_BULK_PACKET		512	/* high speed */
/*
 * Each bulk transfer is one UVC payload: uvcvideo sizes its bulk URBs from
 * dwMaxPayloadTransferSize (at most 32 packets), so a payload of exactly
 * 32 x 512 bytes makes every URB one whole payload with its own header,
 * whatever the frame's size (MJPEG frames vary).
 */
#define UVC_PAYLOAD_SIZE	(32 * UVC_BULK_PACKET)
#define UVC_PAYLOAD_HEADER	2
/* bmHeaderInfo bits */
#define UVC_HDR_FID		0x01
#define UVC_HDR_EOF		0x02
#define UVC_HDR_ERR		0x40
#define UVC_HDR_EOH		0x80

/* A control of the node as QUERYCTRL describes it. */
struct uvc_ctrl_range {
	uint32_t id;			/* V4L2_CID_* */
	int32_t min, max, step, def;
};

struct uvc_fn_ops {
	/*
	 * Required. SET_CUR(COMMIT): stream @mode at @rate from now on
	 * (called again without stop() when the host commits another mode).
	 * 0, or -errno: the request stalls.
	 */
	int (*start)(void *data, const struct client_mode *mode, struct client_rate rate);
	/* Required. The host stopped streaming (CLEAR_FEATURE(HALT) of the endpoint). */
	void (*stop)(void *data);
	/* Required. The node's control @id: 0 and its value, or -errno (stall). */
	int (*get_ctrl)(void *data, uint32_t id, int32_t *ret_value);
	/* Required. Set the node's control @id: 0 or -errno (stall). */
	int (*set_ctrl)(void *data, uint32_t id, int32_t value);
};

struct uvc_fn;

/*
 * A function offering @modes (the formats uvcvideo knows; the others are
 * left out and logged at debug level) and the controls of @ctrls that UVC
 * has (the others left out). @product and @serial become the string
 * descriptors. NULL when no mode is left.
 */
struct uvc_fn *uvc_fn_new(const struct client_mode *modes, unsigned int n_modes,
			  const struct uvc_ctrl_range *ctrls, unsigned int n_ctrls,
			  const char *product, const char *serial,
			  const struct uvc_fn_ops *ops, void *data);
void uvc_fn_free(struct uvc_fn *fn);

/* Is @fourcc a format uvcvideo knows (a GUID or MJPEG)? */
bool uvc_fourcc_supported(uint32_t fourcc);

/* The device descriptor's identity, for the network protocol's device list. */
void uvc_fn_ids(const struct uvc_fn *fn, uint16_t *ret_vendor, uint16_t *ret_product,
		uint16_t *ret_bcd_device);
struct usbip_device_info;
/*
 * The device as the USB/IP network protocol lists it (identity, class,
 * interfaces), under @busid at @busnum/@devnum.
 */
void uvc_device_info(const char *busid, uint32_t busnum, uint32_t devnum,
		     struct usbip_device_info *ret);
/* Formats and modes offered (after filtering). */
unsigned int uvc_fn_n_modes(const struct uvc_fn *fn);

/*
 * One control transfer: @setup and, for OUT, the @out_len bytes of data.
 * IN: the reply goes to @reply (room for @setup's wLength) and its length
 * is returned. OUT: the number of bytes taken is returned. -EPIPE: stall.
 */
int uvc_fn_control(struct uvc_fn *fn, const uint8_t setup[8], const uint8_t *out, size_t out_len,
		   uint8_t *reply);

/*
 * Bulk IN transfers of @len bytes to come while streaming: a payload header
 * for the next transfer of the current frame. @frame_len is the frame's
 * size, @offset how much of it went already; returns the header's length
 * (UVC_PAYLOAD_HEADER) and sets *ret_data to how many bytes of frame data
 * follow it in this transfer. @error marks the frame as bad (ERR bit).
 * The FID toggles at each new frame (offset 0).
 */
size_t uvc_fn_payload_header(struct uvc_fn *fn, uint8_t hdr[UVC_PAYLOAD_HEADER], size_t len,
			     size_t frame_len, size_t offset, bool error, size_t *ret_data);
