/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The USB/IP wire formats (docs/usb.md, "The wire"): the URB protocol that
 * vhci-hcd speaks on an attached socket, and the network protocol's device
 * list and import that the stock `usbip` tool speaks on TCP 3240. Every
 * field is big-endian on the wire. Pure encoding and decoding, no I/O: the
 * fuzz harness (tests/fuzz/fuzz-usb.c) feeds it arbitrary bytes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- the URB protocol (after attach or import) --- */
#define USBIP_CMD_SUBMIT	1u
#define USBIP_CMD_UNLINK	2u
#define USBIP_RET_SUBMIT	3u
#define USBIP_RET_UNLINK	4u

#define USBIP_DIR_OUT		0u
#define USBIP_DIR_IN		1u

#define USBIP_HEADER_SIZE	48u
/* No control transfer of ours carries more; a bulk OUT is refused whole. */
#define USBIP_MAX_OUT		4096u
#define USBIP_MAX_ISO_PACKETS	1024

/* One command from the host (vhci), decoded. */
struct usbip_cmd {
	uint32_t command;	/* USBIP_CMD_SUBMIT or USBIP_CMD_UNLINK */
	uint32_t seqnum;
	uint32_t devid;
	uint32_t direction;	/* USBIP_DIR_* */
	uint32_t ep;		/* endpoint number, 0..15 */
	/* CMD_SUBMIT */
	uint32_t transfer_flags;
	int32_t length;		/* transfer_buffer_length */
	int32_t n_packets;	/* isochronous packets (descriptors follow the data) */
	uint8_t setup[8];	/* control transfers */
	/* CMD_UNLINK */
	uint32_t unlink_seqnum;
};

/*
 * Decode the 48-byte header at @hdr. Returns the number of bytes that
 * follow it on the wire for this command (OUT data and isochronous packet
 * descriptors), or -EPROTO for an unknown command, a negative length, an
 * endpoint above 15 or a payload above the limits above.
 */
long usbip_cmd_decode(const uint8_t hdr[USBIP_HEADER_SIZE], struct usbip_cmd *ret);

/* The 48-byte RET_SUBMIT for @seqnum (actual_length @actual, no packets). */
void usbip_ret_submit_encode(uint8_t out[USBIP_HEADER_SIZE], uint32_t seqnum, int32_t status,
			     int32_t actual);
/* The 48-byte RET_UNLINK for @seqnum. */
void usbip_ret_unlink_encode(uint8_t out[USBIP_HEADER_SIZE], uint32_t seqnum, int32_t status);

/* --- the network protocol (TCP, before the URB protocol) --- */
#define USBIP_PORT		3240
#define USBIP_VERSION		0x0111u
#define USBIP_OP_REQ_DEVLIST	0x8005u
#define USBIP_OP_REP_DEVLIST	0x0005u
#define USBIP_OP_REQ_IMPORT	0x8003u
#define USBIP_OP_REP_IMPORT	0x0003u

#define USBIP_ST_OK		0u
#define USBIP_ST_NA		1u	/* not available */
#define USBIP_ST_DEV_BUSY	2u
#define USBIP_ST_DEV_ERR	3u
#define USBIP_ST_NODEV		4u
#define USBIP_ST_ERROR		5u

#define USBIP_OP_COMMON_SIZE	8u
#define USBIP_BUSID_SIZE	32u
#define USBIP_DEVICE_SIZE	312u	/* struct usbip_usb_device on the wire */
#define USBIP_INTERFACE_SIZE	4u

/* The device as the network protocol describes it. */
struct usbip_device_info {
	char path[256];
	char busid[USBIP_BUSID_SIZE];
	uint32_t busnum, devnum, speed;
	uint16_t id_vendor, id_product, bcd_device;
	uint8_t device_class, device_subclass, device_protocol;
	uint8_t configuration_value, n_configurations, n_interfaces;
	struct {
		uint8_t class, subclass, protocol;
	} interfaces[8];
};

/* The 8-byte op_common: 0 and the fields, or -EPROTO for another version. */
int usbip_op_decode(const uint8_t in[USBIP_OP_COMMON_SIZE], uint16_t *ret_code,
		    uint32_t *ret_status);
void usbip_op_encode(uint8_t out[USBIP_OP_COMMON_SIZE], uint16_t code, uint32_t status);
/* struct usbip_usb_device (312 bytes) of @d. */
void usbip_device_encode(uint8_t out[USBIP_DEVICE_SIZE], const struct usbip_device_info *d);
