Llámenos al 915 123 456, escriba a soporte@ejemplo.com o visite https://www.ejemplo.es/ayuda antes de 2025.
La reunión empieza a las 10:30 y termina a las 12:45.
El precio subió un 3.5% y ahora cuesta 1.234,56 € con impuestos.
La temperatura bajó a -12 grados el 2025-01-31.
Ejecute /usr/bin/env en la terminal y guarde el archivo en C:\Temp antes de salir.
Escriba `make install` para instalar el programa.
El mensaje dice %s archivos copiados y %1$d errores.
Hola {name}, tienes {{count}} mensajes nuevos.
La variable $HOME apunta a su carpeta personal.
El tren sale el 31/01/2025 a las 8:15 desde el andén 4.
Visite www.correos.es (la oficina más cercana) o llame al +34 900 400 004.
Pagué $25 por el libro y 15 € por la cena.
El 75 % de los usuarios abre el archivo ~/notas/lista.txt cada día.
Mi correo es ana.garcia@universidad.edu y mi despacho es el 2.14.
Descargue la versión desde http://descargas.ejemplo.org/v2/setup.exe, y reinicie.
El vuelo IB 3166 aterriza a las 23:05 del 15-08-2024.
Guarde los cambios en ./config/app.yml y escriba `git commit -a` después.
