/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * USB/IP encoding: the layouts of drivers/usb/usbip/usbip_common.h (URB
 * protocol) and tools/usb/usbip/src/usbip_network.h (device list, import),
 * big-endian throughout.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "usbip.h"

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static void
put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

/*
 * The header: command, seqnum, devid, direction, ep (5 x u32), then the
 * command's part at offset 20: CMD_SUBMIT transfer_flags, length,
 * start_frame, number_of_packets, interval (5 x u32) and setup[8];
 * CMD_UNLINK the seqnum to unlink.
 */
long
usbip_cmd_decode(const uint8_t hdr[USBIP_HEADER_SIZE], struct usbip_cmd *ret)
{
	struct usbip_cmd c = {
		.command = get32(hdr),
		.seqnum = get32(hdr + 4),
		.devid = get32(hdr + 8),
		.direction = get32(hdr + 12),
		.ep = get32(hdr + 16),
	};
	long follows = 0;

	if (c.ep > 15 || c.direction > USBIP_DIR_IN)
		return -EPROTO;
	switch (c.command) {
	case USBIP_CMD_SUBMIT:
		c.transfer_flags = get32(hdr + 20);
		c.length = (int32_t)get32(hdr + 24);
		c.n_packets = (int32_t)get32(hdr + 32);
		memcpy(c.setup, hdr + 40, sizeof(c.setup));
		if (c.length < 0)
			return -EPROTO;
		/* Not isochronous: 0, or -1 (0xffffffff) as vhci sends it. */
		if (c.n_packets == -1)
			c.n_packets = 0;
		if (c.n_packets < 0 || c.n_packets > USBIP_MAX_ISO_PACKETS)
			return -EPROTO;
		if (c.direction == USBIP_DIR_OUT) {
			if ((uint32_t)c.length > USBIP_MAX_OUT)
				return -EPROTO;
			follows = c.length;
		}
		/* struct usbip_iso_packet_descriptor: 4 x u32 each. */
		follows += (long)c.n_packets * 16;
		break;
	case USBIP_CMD_UNLINK:
		c.unlink_seqnum = get32(hdr + 20);
		break;
	default:
		return -EPROTO;
	}
	*ret = c;
	return follows;
}

static void
ret_basic(uint8_t out[USBIP_HEADER_SIZE], uint32_t command, uint32_t seqnum)
{
	memset(out, 0, USBIP_HEADER_SIZE);
	put32(out, command);
	put32(out + 4, seqnum);
	/* devid, direction and ep are 0 in replies (vhci matches the seqnum). */
}

void
usbip_ret_submit_encode(uint8_t out[USBIP_HEADER_SIZE], uint32_t seqnum, int32_t status,
			int32_t actual)
{
	ret_basic(out, USBIP_RET_SUBMIT, seqnum);
	put32(out + 20, (uint32_t)status);
	put32(out + 24, (uint32_t)actual);
	/* start_frame 0, number_of_packets 0, error_count 0. */
}

void
usbip_ret_unlink_encode(uint8_t out[USBIP_HEADER_SIZE], uint32_t seqnum, int32_t status)
{
	ret_basic(out, USBIP_RET_UNLINK, seqnum);
	put32(out + 20, (uint32_t)status);
}

/* op_common: u16 version, u16 code, u32 status. */
int
usbip_op_decode(const uint8_t in[USBIP_OP_COMMON_SIZE], uint16_t *ret_code, uint32_t *ret_status)
{
	uint16_t version = (uint16_t)(in[0] << 8 | in[1]);

	if (version != USBIP_VERSION)
		return -EPROTO;
	*ret_code = (uint16_t)(in[2] << 8 | in[3]);
	*ret_status = get32(in + 4);
	return 0;
}

void
usbip_op_encode(uint8_t out[USBIP_OP_COMMON_SIZE], uint16_t code, uint32_t status)
{
	put16(out, USBIP_VERSION);
	put16(out + 2, code);
	put32(out + 4, status);
}

/*
 * struct usbip_usb_device: path[256], busid[32], busnum, devnum, speed
 * (u32), idVendor, idProduct, bcdDevice (u16), bDeviceClass,
 * bDeviceSubClass, bDeviceProtocol, bConfigurationValue,
 * bNumConfigurations, bNumInterfaces (u8).
 */
void
usbip_device_encode(uint8_t out[USBIP_DEVICE_SIZE], const struct usbip_device_info *d)
{
	uint8_t *p = out + 256 + USBIP_BUSID_SIZE;

	memset(out, 0, USBIP_DEVICE_SIZE);
	memcpy(out, d->path, strnlen(d->path, 255));
	memcpy(out + 256, d->busid, strnlen(d->busid, USBIP_BUSID_SIZE - 1));
	put32(p, d->busnum);
	put32(p + 4, d->devnum);
	put32(p + 8, d->speed);
	put16(p + 12, d->id_vendor);
	put16(p + 14, d->id_product);
	put16(p + 16, d->bcd_device);
	p[18] = d->device_class;
	p[19] = d->device_subclass;
	p[20] = d->device_protocol;
	p[21] = d->configuration_value;
	p[22] = d->n_configurations;
	p[23] = d->n_interfaces;
}
