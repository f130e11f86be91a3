Y el rey mandó a sus siervos que trajesen pan y agua para todo el pueblo.
Entonces los discípulos subieron al monte y oraron toda la noche.
El Señor habló a Moisés, diciendo: Di a los hijos de Israel que guarden mis mandamientos.
La mujer tomó a su hijo y salió de la ciudad por la puerta del oriente.
No temáis, porque yo iré con vosotros por el camino del desierto.
Y vino palabra de Jehová al profeta, y él la escribió en un libro.
