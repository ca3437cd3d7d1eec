package pdftext

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
)

// Decryption of streams as the library does it, so that the object-stream
// checks see the bytes its tokenizer will see in an encrypted document
// (the standard security handler, PDF 32000-1:2008, 7.6.3 and 7.6.4).

// passwordPad pads passwords to 32 bytes (7.6.4.3, Algorithm 2, step a).
var passwordPad = []byte{
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
}

// streamCrypt decrypts the streams of a document opened with the empty
// user password.
type streamCrypt struct {
	key    []byte
	useAES bool
}

// newStreamCrypt derives the file key from the /Encrypt dictionary and
// the first /ID string for the empty user password, as the library does.
// ok is false when the library would refuse the document (another
// handler, version or key length, or a user password, which /U shows the
// empty one is not): it then reads no object, so nothing can loop.
func newStreamCrypt(encrypt map[pdfName]any, id []byte) (c *streamCrypt, ok bool) {
	key, ok := fileKey(encrypt, id)
	u, _ := encrypt["U"].(pdfString)
	if !ok || len(u) != 32 {
		return nil, false
	}
	// /U for the empty password (Algorithms 4 and 5): RC4 of the padding,
	// or from R 3, of the MD5 of the padding and /ID, then 19 more RC4
	// passes with the key's bytes XORed with the pass number.
	var want []byte
	if encrypt["R"] == int64(2) {
		want = bytes.Clone(passwordPad)
		s, _ := rc4.NewCipher(key)
		s.XORKeyStream(want, want)
	} else {
		sum := md5.Sum(append(bytes.Clone(passwordPad), id...))
		want = sum[:]
		k := make([]byte, len(key))
		for i := range 20 {
			for j := range k {
				k[j] = key[j] ^ byte(i)
			}
			s, _ := rc4.NewCipher(k)
			s.XORKeyStream(want, want)
		}
	}
	if !bytes.HasPrefix([]byte(u), want) {
		return nil, false
	}
	return &streamCrypt{key: key, useAES: encrypt["V"] == int64(4)}, true
}

// fileKey is the file key for the empty user password (Algorithm 2), with
// the library's choices: no /EncryptMetadata step, V 4 meaning AESV2 (its
// crypt filters are not looked at). ok is false for what the library
// refuses before that.
func fileKey(encrypt map[pdfName]any, id []byte) (key []byte, ok bool) {
	if encrypt["Filter"] != pdfName("Standard") {
		return nil, false
	}
	bits, _ := encrypt["Length"].(int64)
	if bits == 0 {
		bits = 40
	}
	v, _ := encrypt["V"].(int64)
	r, _ := encrypt["R"].(int64)
	o, _ := encrypt["O"].(pdfString)
	p, _ := encrypt["P"].(int64)
	if bits%8 != 0 || bits < 40 || bits > 128 || (v != 1 && v != 2 && v != 4) || r < 2 || r > 4 || len(o) != 32 {
		return nil, false
	}
	h := md5.New()
	h.Write(passwordPad)
	h.Write([]byte(o))
	h.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
	h.Write(id)
	key = h.Sum(nil)
	n := int(bits / 8)
	if r < 3 {
		return key[:5], true
	}
	for range 50 {
		sum := md5.Sum(key[:n])
		key = sum[:]
	}
	return key[:n], true
}

// decrypt returns the plain bytes of object num/gen's stream data as the
// library's reader yields them (its whole MD5 as the object key, AES-CBC
// with no padding removed); ok is false when that reader fails before
// the end (a partial AES block), which ends the tokenizer with an error.
func (c *streamCrypt) decrypt(num, gen int64, data []byte) (plain []byte, ok bool) {
	h := md5.New()
	h.Write(c.key)
	h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), byte(gen), byte(gen >> 8)})
	if c.useAES {
		h.Write([]byte("sAlT"))
	}
	objKey := h.Sum(nil)
	if !c.useAES {
		s, err := rc4.NewCipher(objKey)
		if err != nil {
			return nil, false
		}
		plain = make([]byte, len(data))
		s.XORKeyStream(plain, data)
		return plain, true
	}
	if len(data) < aes.BlockSize {
		return nil, true
	}
	if (len(data)-aes.BlockSize)%aes.BlockSize != 0 {
		return nil, false
	}
	b, err := aes.NewCipher(objKey)
	if err != nil {
		return nil, false
	}
	plain = make([]byte, len(data)-aes.BlockSize)
	cipher.NewCBCDecrypter(b, data[:aes.BlockSize]).CryptBlocks(plain, data[aes.BlockSize:])
	return plain, true
}
