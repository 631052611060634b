# @file obj_writer.py: the OBJ scene generators' face writer (make_manylights.py, make_skyhall.py).


def write_faces(f, faces):
    """Writes (material, vertex indices) faces in their order, with a usemtl line wherever the material changes."""
    current = None
    for mat, idx in faces:
        if mat != current:
            f.write("usemtl %s\n" % mat)
            current = mat
        f.write("f %s\n" % " ".join(str(i) for i in idx))
